import { describe, expect, it } from "bun:test";
import { Logger } from "../../../src/log/logger";
import { VModule } from "../../../src/log/vmodule";

describe("--vmodule", () => {
  it("matches globs against the file name without extension, or the path when the pattern has a slash; the first rule decides", () => {
    const vmodule = new VModule([
      { pattern: "csi-handler", verbosity: 5 },
      { pattern: "reconcil*", verbosity: 4 },
      { pattern: "controller/migration/*", verbosity: 3 },
      { pattern: "csi-h?ndler", verbosity: 1 },
    ]);
    const paths = [
      "/app/src/controller/csi-handler.ts",
      "src/controller/reconciler.ts",
      "src/controller/migration/gce-pd.ts",
      "src/controller/va-writer.ts",
      "src/kube/csi-handler.js",
    ];
    expect(paths.map((path) => vmodule.verbosityOf(path))).toEqual([5, 4, 3, -1, 5]);
    expect(vmodule.maxVerbosity).toBe(5);
  });

  it("prints a -v line from a file a rule names though the global -v is lower, and no other", () => {
    const lines: string[] = [];
    // This test file is the caller of log.v(): name it in the rule.
    const log = new Logger({ verbosity: 0, sink: (line) => lines.push(line), vmodule: [{ pattern: "vmodule.test", verbosity: 4 }] });
    log.v(4).info("granted");
    log.v(5).info("above the rule");
    const other = new Logger({ verbosity: 0, sink: (line) => lines.push(line), vmodule: [{ pattern: "some-other-file", verbosity: 9 }] });
    other.v(1).info("not this file");
    expect(lines.map((line) => line.slice(line.indexOf("]") + 2))).toEqual(['"granted"']);
  });
});
