/**
 * `bun run start` on the local test ground: Ctrl-C is how a person ends it,
 * so it is a clean stop, not a failure. A terminal sends Ctrl-C's SIGINT to
 * its whole foreground process group (`bun run`, the script, anything they
 * did not put in a session of their own), so the test starts `bun run
 * start` as the leader of a group and signals the group, as a terminal does.
 * Without a terminal on its stdin, `bun run` also passes the SIGINT on to
 * the script, which then gets it twice: the stop must hold through that.
 */
import { describe, expect, it } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitForCondition } from "../ground/managed-process";

const repositoryRoot = join(import.meta.dir, "../..");

/** Collects a stream's text as it comes, so a wait can look at what has arrived so far. */
function collect(stream: ReadableStream<Uint8Array>): { readonly text: () => string; readonly done: Promise<void> } {
  let text = "";
  const decoder = new TextDecoder();
  const done = (async () => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  })();
  return { text: () => text, done };
}

/** The pids of the processes whose command line names `needle`: what of the ground still runs. */
function processesNaming(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine: string;
    try {
      commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch (e: unknown) {
      // A process that ended between the listing and the read is not running.
      if (e instanceof Error && "code" in e && (e.code === "ENOENT" || e.code === "ESRCH")) continue;
      throw e;
    }
    if (commandLine.includes(needle)) pids.push(Number(entry));
  }
  return pids;
}

describe("bun run start", () => {
  it("takes the attacher and the ground down at Ctrl-C and exits 0 without an error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "start-script-"));
    const start = Bun.spawn([process.execPath, "run", "start", `--ground-dir=${dir}`], {
      cwd: repositoryRoot,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      // Leader of a process group of its own: the group is what a terminal's Ctrl-C reaches.
      detached: true,
    });
    const stdout = collect(start.stdout);
    const stderr = collect(start.stderr);
    try {
      // The demo VA attached: the ground, the driver and the attacher all run.
      await waitForCondition(() => /"Attached".*demo-va/.test(stdout.text()), {
        description: "the attacher to attach demo-va",
        timeoutMs: 120_000,
        status: () => `stdout so far:\n${stdout.text()}\nstderr so far:\n${stderr.text()}`,
      });
      expect(processesNaming(dir).length).toBeGreaterThan(0);

      process.kill(-start.pid, "SIGINT");
      const exitCode = await start.exited;
      await Promise.all([stdout.done, stderr.done]);

      expect({ exitCode, errorLines: stderr.text().split("\n").filter((line) => /error/i.test(line)), stillRunning: processesNaming(dir) }).toEqual({
        exitCode: 0,
        errorLines: [],
        stillRunning: [],
      });
      // The attacher drained as on a pod's SIGTERM, and its log was shown to its last line.
      expect(stdout.text()).toMatch(/"Received signal, shutting down" signal="SIGTERM"/);
    } finally {
      // On a failure: the ground's watchdogs take its processes down once the script is gone.
      if (start.exitCode === null) process.kill(-start.pid, "SIGKILL");
      await start.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
