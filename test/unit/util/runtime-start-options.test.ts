import { describe, expect, it } from "bun:test";
import { runtimeOptionsToAdd } from "../../../src/util/runtime-start-options";

const MiB = 1024 * 1024;
const unlimited = { limitBytes: undefined, runtimeRamBytes: 24 * 1024 * MiB };

describe("the runtime options the attacher starts with", () => {
  it("turns DFG, FTL and Bun's GC timer off when the environment names none of them", () => {
    expect(runtimeOptionsToAdd({ PATH: "/bin" }, unlimited)).toEqual({ BUN_JSC_useDFGJIT: "0", BUN_JSC_useFTLJIT: "0", BUN_GC_TIMER_DISABLE: "1" });
  });

  it("keeps an operator's value for each option it names, even an empty one, and adds nothing once all are set", () => {
    const timerOff = { BUN_GC_TIMER_DISABLE: "1" };
    expect([
      runtimeOptionsToAdd({ ...timerOff, BUN_JSC_useDFGJIT: "1" }, unlimited),
      runtimeOptionsToAdd({ ...timerOff, BUN_JSC_useFTLJIT: "" }, unlimited),
      runtimeOptionsToAdd({ BUN_JSC_useDFGJIT: "0", BUN_JSC_useFTLJIT: "0", BUN_GC_TIMER_DISABLE: "0" }, unlimited),
    ]).toEqual([{ BUN_JSC_useFTLJIT: "0" }, { BUN_JSC_useDFGJIT: "0" }, {}]);
  });

  it("sizes JSC's heap by a cgroup limit the runtime did not see (set on an ancestor only), unless the operator sized it", () => {
    const tiersSet = { BUN_JSC_useDFGJIT: "0", BUN_JSC_useFTLJIT: "0", BUN_GC_TIMER_DISABLE: "1" };
    expect([
      runtimeOptionsToAdd(tiersSet, { limitBytes: 96 * MiB, runtimeRamBytes: 24 * 1024 * MiB }),
      // The runtime found the same limit in the process's own group: nothing to add.
      runtimeOptionsToAdd(tiersSet, { limitBytes: 96 * MiB, runtimeRamBytes: 96 * MiB }),
      runtimeOptionsToAdd({ ...tiersSet, BUN_JSC_forceRAMSize: String(64 * MiB) }, { limitBytes: 96 * MiB, runtimeRamBytes: 24 * 1024 * MiB }),
    ]).toEqual([{ BUN_JSC_forceRAMSize: String(96 * MiB) }, {}, {}]);
  });
});
