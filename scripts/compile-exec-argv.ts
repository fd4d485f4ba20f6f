/**
 * The runtime arguments baked into the compiled attacher
 * (`bun build --compile-exec-argv`), shared by scripts/build.ts and the
 * bench's floor programs so that both run the same runtime.
 * ATTACHER_EXEC_ARGV overrides it for a build (A/B comparisons): a
 * space-separated list, empty for none.
 */
const override = process.env["ATTACHER_EXEC_ARGV"];

export const compileExecArgv: readonly string[] = override === undefined ? [] : override.split(" ").filter((arg) => arg !== "");

/** compileExecArgvFlags are the `bun build` flags that bake `compileExecArgv` in (none when it is empty). */
export function compileExecArgvFlags(): string[] {
  return compileExecArgv.length === 0 ? [] : [`--compile-exec-argv=${compileExecArgv.join(" ")}`];
}
