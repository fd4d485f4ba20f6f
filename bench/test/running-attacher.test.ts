import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnManaged } from "../../test/ground/managed-process";
import { RunningAttacher } from "../lib/attacher-under-test";
import { readMemory } from "../lib/proc-stats";

const logDir = mkdtempSync(join(tmpdir(), "running-attacher-"));
afterAll(() => rmSync(logDir, { recursive: true, force: true }));

describe("memory figures of a process that has exited", () => {
  it("a gone attacher's figure of the moment stops the run naming its binary and log, instead of reading 0 bytes", async () => {
    const process = spawnManaged({ name: "gone", command: ["/bin/true"], logDir });
    await process.exited;
    const attacher = new RunningAttacher({ kind: "ours", path: "/bin/true" }, process, performance.now());
    try {
      const failure = (read: () => unknown): string => {
        try {
          read();
          return "no error";
        } catch (e: unknown) {
          return e instanceof Error ? e.message : String(e);
        }
      };
      expect({
        periodicSample: attacher.sample(),
        sampleNow: failure(() => attacher.sampleNow()),
        hwm: failure(() => attacher.hwmBytes()),
        anon: failure(() => attacher.anonBytes()),
        recorded: attacher.rss.length,
      }).toEqual({
        periodicSample: undefined,
        sampleNow: `ours attacher (/bin/true) has exited, so it has no memory figures to give; its log: ${process.stderrPath}`,
        hwm: `ours attacher (/bin/true) has exited, so it has no memory figures to give; its log: ${process.stderrPath}`,
        anon: `ours attacher (/bin/true) has exited, so it has no memory figures to give; its log: ${process.stderrPath}`,
        recorded: 0,
      });
    } finally {
      await attacher.stop();
    }
  });

  it("a zombie (exited, not yet reaped) has no memory to read, not 0 bytes", async () => {
    // `sleep 0` exits at once; its parent became `sleep 5` by exec and never reaps it.
    const parent = Bun.spawn(["/bin/sh", "-c", "sleep 0 & exec sleep 5"], { stdout: "ignore", stderr: "ignore" });
    try {
      const children = `/proc/${parent.pid}/task/${parent.pid}/children`;
      let zombie: number | undefined;
      for (let tries = 0; tries < 200 && zombie === undefined; tries++) {
        const pid = Number(readFileSync(children, "utf8").trim().split(" ")[0]);
        if (pid > 0 && /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"))) zombie = pid;
        else await Bun.sleep(5);
      }
      expect({ zombieFound: zombie !== undefined, memory: zombie === undefined ? "none" : readMemory(zombie) }).toEqual({ zombieFound: true, memory: undefined });
    } finally {
      parent.kill("SIGKILL");
      await parent.exited;
    }
  });
});
