import { describe, expect, it } from "bun:test";
import { assessVolumeAttachment, type AssessmentContext, type VolumeAttachmentFacts } from "../../../src/doctor/assess-volume-attachment";

const now = Date.parse("2026-11-22T12:00:00Z");
const minute = 60_000;

function facts(overrides: Partial<VolumeAttachmentFacts> = {}): VolumeAttachmentFacts {
  return {
    name: "va-1",
    nodeName: "node-a",
    pvName: "pv-1",
    attached: true,
    attachError: undefined,
    detachError: undefined,
    createdAtMs: now - 10 * minute,
    deletingSinceMs: undefined,
    volume: { handle: "vol-1" },
    node: { id: "node-a-id" },
    ...overrides,
  };
}

function context(published?: Record<string, string[]>): AssessmentContext {
  return { nowMs: now, stuckAfterMs: 5 * minute, published: published ? new Map(Object.entries(published)) : undefined };
}

describe("assessVolumeAttachment", () => {
  it("calls an attached VA healthy when the driver has it published to the node", () => {
    expect(assessVolumeAttachment(facts(), context({ "vol-1": ["node-a-id"] }))).toEqual({
      name: "va-1",
      node: "node-a",
      pv: "pv-1",
      attached: true,
      error: "",
      ageMs: 10 * minute,
      state: "attached",
      driver: "agrees",
      detail: "",
      problem: false,
    });
  });

  it("calls an attached VA drifted when the driver does not have it published to the node", () => {
    const row = assessVolumeAttachment(facts(), context({ "vol-1": ["node-b-id"] }));
    expect({ state: row.state, driver: row.driver, problem: row.problem, detail: row.detail }).toEqual({
      state: "drifted",
      driver: "disagrees",
      problem: true,
      detail: "driver does not have volume vol-1 published to node ID node-a-id, status says attached",
    });
  });

  it("leaves the driver column unchecked when the driver cannot list published nodes", () => {
    const row = assessVolumeAttachment(facts(), context());
    expect({ state: row.state, driver: row.driver, problem: row.problem }).toEqual({ state: "attached", driver: "unchecked", problem: false });
  });

  it("reports an attach error as a problem with the error text", () => {
    const row = assessVolumeAttachment(facts({ attached: false, attachError: "rpc error: code = Internal desc = boom" }), context({}));
    expect({ state: row.state, error: row.error, driver: row.driver, problem: row.problem }).toEqual({
      state: "attach-failed",
      error: "rpc error: code = Internal desc = boom",
      driver: "agrees",
      problem: true,
    });
  });

  it("gives a young unattached VA without error time, and calls it stuck after --stuck-after", () => {
    const young = assessVolumeAttachment(facts({ attached: false, createdAtMs: now - minute }), context());
    const old = assessVolumeAttachment(facts({ attached: false, createdAtMs: now - 6 * minute }), context());
    expect([young.state, young.problem, old.state, old.problem, old.detail]).toEqual(["attaching", false, "stuck", true, "attaching for 6m with no error"]);
  });

  it("judges a VA being deleted by its detach error and the time since deletion", () => {
    const detaching = assessVolumeAttachment(facts({ deletingSinceMs: now - minute }), context());
    const failed = assessVolumeAttachment(facts({ deletingSinceMs: now - minute, detachError: "rpc error: code = Unavailable desc = busy" }), context());
    const stuck = assessVolumeAttachment(facts({ deletingSinceMs: now - 7 * minute }), context());
    expect([detaching.state, failed.state, failed.error, stuck.state]).toEqual(["detaching", "detach-failed", "rpc error: code = Unavailable desc = busy", "stuck"]);
  });

  it("cannot compare with the driver when the PV is missing, and says why", () => {
    const row = assessVolumeAttachment(facts({ volume: { unknown: "PV pv-1 not found" } }), context({}));
    expect({ driver: row.driver, detail: row.detail, problem: row.problem }).toEqual({ driver: "unknown", detail: "PV pv-1 not found", problem: false });
  });
});
