import { describe, expect, it } from "bun:test";
import { existsSync } from "node:fs";
import { expectedSeconds, planShards, slowFileSeconds, typicalFileSeconds } from "../../../scripts/test/e2e-shards";

describe("the e2e shard plan", () => {
  it("puts the two longest files in different shards, and fills the others' shards with the short ones", () => {
    const seconds: Record<string, number> = { "a.test.ts": 170, "b.test.ts": 160, "c.test.ts": 10, "d.test.ts": 10, "e.test.ts": 10 };
    expect(planShards(Object.keys(seconds), 3, (file) => seconds[file] ?? 0)).toEqual([["a.test.ts"], ["b.test.ts"], ["c.test.ts", "d.test.ts", "e.test.ts"]]);
  });

  it("deals every file exactly once, whatever the number of shards", () => {
    const files = Array.from({ length: 17 }, (_, index) => `f${index}.test.ts`);
    for (const shards of [1, 2, 3, 5]) {
      const plan = planShards(files, shards);
      expect({ shards: plan.length, files: plan.flat().sort() }).toEqual({ shards, files: [...files].sort() });
    }
  });

  it("drops shards it has no file for, and treats fewer than one shard as one", () => {
    expect(planShards(["a.test.ts"], 3)).toEqual([["a.test.ts"]]);
    expect(planShards(["a.test.ts", "b.test.ts"], 0)).toEqual([["a.test.ts", "b.test.ts"]]);
  });

  it("keeps each shard's files in name order", () => {
    const plan = planShards(["z.test.ts", "m.test.ts", "a.test.ts", "q.test.ts"], 2, () => 1);
    for (const group of plan) expect(group).toEqual([...group].sort());
  });

  it("names only e2e files that exist, and counts any other file as a typical one", () => {
    expect(Object.keys(slowFileSeconds).filter((file) => !existsSync(file))).toEqual([]);
    expect(expectedSeconds("test/e2e/no-such.test.ts")).toBe(typicalFileSeconds);
  });
});
