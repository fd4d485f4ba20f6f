import { describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { terminationLogPath, writeTerminationMessage } from "../../../src/util/termination-message";

describe("termination message", () => {
  it("replaces the content of the existing termination log", () => {
    const path = join(mkdtempSync(join(tmpdir(), "termination-")), "termination-log");
    writeFileSync(path, "an older, longer message from a previous run\n");
    expect(writeTerminationMessage(path, "Lost connection to CSI driver, exiting")).toBeUndefined();
    expect(readFileSync(path, "utf8")).toBe("Lost connection to CSI driver, exiting\n");
  });

  it("creates nothing where no termination log is mounted, and says why", () => {
    const path = join(mkdtempSync(join(tmpdir(), "termination-")), "termination-log");
    expect(writeTerminationMessage(path, "x")).toContain("ENOENT");
    expect(existsSync(path)).toBe(false);
  });

  it("defaults to Kubernetes' terminationMessagePath unless the environment names another", () => {
    expect([terminationLogPath({}), terminationLogPath({ CSI_ATTACHER_TERMINATION_LOG: "/tmp/t" })]).toEqual(["/dev/termination-log", "/tmp/t"]);
  });
});
