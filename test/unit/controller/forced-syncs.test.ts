import { describe, expect, it } from "bun:test";
import { ForcedSyncs } from "../../../src/controller/forced-syncs";

describe("forced syncs", () => {
  it("are consumed by the first take, once per mark", () => {
    const forced = new ForcedSyncs();
    forced.mark("va-1");
    forced.mark("va-1");
    expect([forced.take("va-1"), forced.take("va-1"), forced.take("va-2")]).toEqual([true, false, false]);
  });
});
