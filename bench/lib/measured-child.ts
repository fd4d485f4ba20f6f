import { runtimeOptionsToAdd } from "../../src/util/runtime-start-options";

/**
 * measureInChild runs one measurement of a microbenchmark in a fresh Bun
 * process (`bun <script> ...args`), with the runtime options the
 * attacher's binary starts with (DFG and FTL off: what it is measured for),
 * and returns the one JSON line the child prints.
 */
export async function measureInChild<T>(script: string, args: readonly string[]): Promise<T> {
  const env = { ...process.env, ...runtimeOptionsToAdd(process.env, { limitBytes: undefined, runtimeRamBytes: 0 }) };
  const child = Bun.spawn([process.execPath, script, ...args], { env, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`${script} ${args.join(" ")}: exit ${child.exitCode}`);
  return JSON.parse(out) as T;
}
