import { afterAll, describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { terminationLogPath, writeTerminationMessage } from "../../../src/util/termination-message";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A termination log's path in a fresh directory, removed after the file's rules. */
function freshLogPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "termination-"));
  dirs.push(dir);
  return join(dir, "termination-log");
}

describe("termination message", () => {
  it("replaces the content of the existing termination log", () => {
    const path = freshLogPath();
    writeFileSync(path, "an older, longer message from a previous run\n");
    expect(writeTerminationMessage(path, "Lost connection to CSI driver, exiting")).toBeUndefined();
    expect(readFileSync(path, "utf8")).toBe("Lost connection to CSI driver, exiting\n");
  });

  it("creates nothing where no termination log is mounted, and says why", () => {
    const path = freshLogPath();
    expect(writeTerminationMessage(path, "x")).toContain("ENOENT");
    expect(existsSync(path)).toBe(false);
  });

  it("defaults to Kubernetes' terminationMessagePath unless the environment names another", () => {
    expect([terminationLogPath({}), terminationLogPath({ CSI_ATTACHER_TERMINATION_LOG: "/tmp/t" })]).toEqual(["/dev/termination-log", "/tmp/t"]);
  });
});
