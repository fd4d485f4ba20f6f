import { describe, expect, it } from "bun:test";
import { jscOptionsToAdd } from "../../../src/util/jsc-start-options";

const MiB = 1024 * 1024;
const unlimited = { limitBytes: undefined, runtimeRamBytes: 24 * 1024 * MiB };

describe("the JSC options the attacher starts with", () => {
  it("turns DFG and FTL off when the environment names neither", () => {
    expect(jscOptionsToAdd({ PATH: "/bin" }, unlimited)).toEqual({ BUN_JSC_useDFGJIT: "0", BUN_JSC_useFTLJIT: "0" });
  });

  it("keeps an operator's value for each tier it names, even an empty one, and adds nothing once all are set", () => {
    expect([
      jscOptionsToAdd({ BUN_JSC_useDFGJIT: "1" }, unlimited),
      jscOptionsToAdd({ BUN_JSC_useFTLJIT: "" }, unlimited),
      jscOptionsToAdd({ BUN_JSC_useDFGJIT: "0", BUN_JSC_useFTLJIT: "0" }, unlimited),
    ]).toEqual([{ BUN_JSC_useFTLJIT: "0" }, { BUN_JSC_useDFGJIT: "0" }, {}]);
  });

  it("sizes JSC's heap by a cgroup limit the runtime did not see (set on an ancestor only), unless the operator sized it", () => {
    const tiersSet = { BUN_JSC_useDFGJIT: "0", BUN_JSC_useFTLJIT: "0" };
    expect([
      jscOptionsToAdd(tiersSet, { limitBytes: 96 * MiB, runtimeRamBytes: 24 * 1024 * MiB }),
      // The runtime found the same limit in the process's own group: nothing to add.
      jscOptionsToAdd(tiersSet, { limitBytes: 96 * MiB, runtimeRamBytes: 96 * MiB }),
      jscOptionsToAdd({ ...tiersSet, BUN_JSC_forceRAMSize: String(64 * MiB) }, { limitBytes: 96 * MiB, runtimeRamBytes: 24 * 1024 * MiB }),
    ]).toEqual([{ BUN_JSC_forceRAMSize: String(96 * MiB) }, {}, {}]);
  });
});
