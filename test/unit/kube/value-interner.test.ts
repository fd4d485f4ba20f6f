import { describe, expect, it } from "bun:test";
import { ValueInterner } from "../../../src/kube/value-interner";

describe("value interner", () => {
  it("hands out one frozen copy per distinct list and map, equal to what was given", () => {
    const shared = new ValueInterner();
    const lists = [shared.list(["a", "b"]), shared.list(["a", "b"].slice()), shared.list(["a\nb"]), shared.list(["b", "a"])];
    const maps = [shared.map({ k: "v" }), shared.map(JSON.parse('{"k":"v"}') as Record<string, string>), shared.map({ k: "w" })];
    expect({
      lists,
      sameList: lists[0] === lists[1],
      distinctLists: new Set(lists).size,
      maps,
      sameMap: maps[0] === maps[1],
      frozen: [Object.isFrozen(lists[0]), Object.isFrozen(maps[0])],
    }).toEqual({
      lists: [["a", "b"], ["a", "b"], ["a\nb"], ["b", "a"]],
      sameList: true,
      distinctLists: 3,
      maps: [{ k: "v" }, { k: "v" }, { k: "w" }],
      sameMap: true,
      frozen: [true, true],
    });
  });

  it("stops remembering new values past maxEntries but still returns them", () => {
    const shared = new ValueInterner({ maxEntries: 1 });
    const first = shared.list(["x"]);
    const second = shared.list(["y"]);
    expect({ firstShared: shared.list(["x"]) === first, secondShared: shared.list(["y"]) === second, second }).toEqual({ firstShared: true, secondShared: false, second: ["y"] });
  });
});
