import { describe, expect, it } from "bun:test";
import { existsSync } from "node:fs";
import { expectedSeconds, longestFirst, slowFileSeconds, typicalFileSeconds } from "../../../scripts/test/e2e-file-order";

describe("the e2e files' start order", () => {
  it("starts the longest files first, so that the ones started last are short", () => {
    const seconds: Record<string, number> = { "c.test.ts": 10, "a.test.ts": 170, "e.test.ts": 8, "b.test.ts": 160, "d.test.ts": 60 };
    expect(longestFirst(Object.keys(seconds), (file) => seconds[file] ?? 0)).toEqual(["a.test.ts", "b.test.ts", "d.test.ts", "c.test.ts", "e.test.ts"]);
  });

  it("orders files expected to take as long by name", () => {
    expect(longestFirst(["z.test.ts", "m.test.ts", "a.test.ts"], () => 1)).toEqual(["a.test.ts", "m.test.ts", "z.test.ts"]);
  });

  it("keeps every file exactly once and leaves its input as it was", () => {
    const files = Array.from({ length: 17 }, (_, index) => `f${index}.test.ts`).reverse();
    const given = [...files];
    expect(longestFirst(files).sort()).toEqual([...files].sort());
    expect(files).toEqual(given);
  });

  it("names only e2e files that exist, and counts any other file as a typical one", () => {
    expect(Object.keys(slowFileSeconds).filter((file) => !existsSync(file))).toEqual([]);
    expect(expectedSeconds("test/e2e/no-such.test.ts")).toBe(typicalFileSeconds);
    expect(longestFirst(["test/e2e/no-such.test.ts", "test/e2e/real-node.test.ts"])).toEqual(["test/e2e/real-node.test.ts", "test/e2e/no-such.test.ts"]);
  });
});
