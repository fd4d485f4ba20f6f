/**
 * Floor (a): a compiled Bun program that loads only what the attacher needs
 * to talk to its two peers, makes one request over TLS to kube-apiserver
 * (on the stack FLOOR_API_STACK names: our HTTP/2 session by default) and
 * opens one HTTP/2 connection to the driver's socket, then idles. Its
 * memory is what the runtime costs before any attacher code runs.
 *
 *   load-only --kubeconfig=PATH --csi-address=SOCKET   (other flags ignored)
 */
// First, as in src/entry.ts: the floor runs with the runtime options the attacher runs with, so ours/floor compares code, not runtime options.
import "../../src/util/reexec-with-runtime-options";
import { apiFetch, connectDriver, exitOnSignals, flagValue, readApiTarget } from "./floor-connections";

async function main(): Promise<void> {
  exitOnSignals();
  const argv = process.argv.slice(2);
  const target = await readApiTarget(flagValue(argv, "kubeconfig") ?? "");
  await (await apiFetch(target, "/version")).text();
  // Never used again: its open socket keeps the connection while the program idles.
  await connectDriver(flagValue(argv, "csi-address") ?? "");
  process.stderr.write('"Floor ready"\n');
  // Idle with both connections open, as an attacher with nothing to do (the socket is unref'd: the timer keeps the process).
  setInterval(() => undefined, 60_000);
}

main().catch((e: unknown) => {
  process.stderr.write(`floor: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
