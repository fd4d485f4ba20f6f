import { describe, expect, it } from "bun:test";
import {
  acquireRetryDelay,
  claimRecord,
  isLeaseValid,
  leaderHealthError,
  mayTakeLease,
  observe,
  releasedRecord,
  type Observation,
} from "../../../src/leader/lease-decisions";
import { formatMicroTime, type LeaderElectionRecord } from "../../../src/leader/lease-record";

const t0 = Date.UTC(2026, 10, 22, 11, 0, 0, 0);

function record(fields: Partial<LeaderElectionRecord> = {}): LeaderElectionRecord {
  return {
    holderIdentity: "replica-a",
    leaseDurationSeconds: 15,
    acquireTime: formatMicroTime(t0 - 60_000),
    renewTime: formatMicroTime(t0),
    leaseTransitions: 3,
    ...fields,
  };
}

describe("lease expiry", () => {
  it("counts the record's leaseDurationSeconds from when WE first saw the record, not from its renewTime", () => {
    // renewTime an hour old (another machine's clock): irrelevant, we saw it at t0.
    const observation: Observation = { record: record({ renewTime: formatMicroTime(t0 - 3_600_000) }), observedAt: t0 };
    expect(isLeaseValid(observation, t0 + 14_999)).toBe(true);
    expect(isLeaseValid(observation, t0 + 15_000)).toBe(false);
  });

  it("keeps the first observation time while the record does not change, and restarts it when it does", () => {
    const first = observe(undefined, record(), t0);
    expect(observe(first, record(), t0 + 10_000)).toBe(first);
    const renewed = record({ renewTime: formatMicroTime(t0 + 5_000) });
    expect(observe(first, renewed, t0 + 10_000)).toEqual({ record: renewed, observedAt: t0 + 10_000 });
  });

  it("uses a released record's one-second duration, so a standby takes it almost at once", () => {
    const observation = observe(undefined, releasedRecord(record(), t0), t0);
    expect(isLeaseValid(observation, t0 + 1_001)).toBe(false);
  });
});

describe("may we take the lease", () => {
  const held = (fields: Partial<LeaderElectionRecord>, observedAt = t0): Observation => ({ record: record(fields), observedAt });

  it("refuses a lease another replica holds and renewed within its duration", () => {
    expect(mayTakeLease(held({ holderIdentity: "replica-a" }), "replica-b", t0 + 5_000)).toBe(false);
  });

  it("takes a lease whose holder fell silent for the whole duration", () => {
    expect(mayTakeLease(held({ holderIdentity: "replica-a" }), "replica-b", t0 + 15_000)).toBe(true);
  });

  it("takes a lease nobody holds (released) even within its duration", () => {
    expect(mayTakeLease(held({ holderIdentity: "" }), "replica-b", t0)).toBe(true);
  });

  it("always lets the holder renew its own lease", () => {
    expect(mayTakeLease(held({ holderIdentity: "replica-b" }), "replica-b", t0)).toBe(true);
  });
});

describe("the record we write", () => {
  const now = t0 + 2_000;

  it("renewing keeps acquireTime and the transition count and moves renewTime", () => {
    const current = record({ holderIdentity: "replica-b" });
    expect(claimRecord(current, "replica-b", 15_000, now)).toEqual({
      holderIdentity: "replica-b",
      leaseDurationSeconds: 15,
      acquireTime: current.acquireTime,
      renewTime: "2026-11-22T11:00:02.000000Z",
      leaseTransitions: 3,
    });
  });

  it("taking over counts one more transition and sets both times to now", () => {
    expect(claimRecord(record(), "replica-b", 4_000, now)).toEqual({
      holderIdentity: "replica-b",
      leaseDurationSeconds: 4,
      acquireTime: "2026-11-22T11:00:02.000000Z",
      renewTime: "2026-11-22T11:00:02.000000Z",
      leaseTransitions: 4,
    });
  });

  it("creating the lease starts the transition count at 0", () => {
    expect(claimRecord(undefined, "replica-b", 15_500, now).leaseTransitions).toBe(0);
  });

  it("truncates the lease duration to whole seconds like client-go", () => {
    expect(claimRecord(undefined, "replica-b", 15_999, now).leaseDurationSeconds).toBe(15);
  });

  it("releasing empties the holder, shortens the duration to 1 s and keeps the transition count", () => {
    expect(releasedRecord(record(), now)).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: "2026-11-22T11:00:02.000000Z",
      renewTime: "2026-11-22T11:00:02.000000Z",
      leaseTransitions: 3,
    });
  });
});

describe("acquire retry timing", () => {
  it("waits the retry period plus up to 1.2 retry periods of jitter", () => {
    expect(acquireRetryDelay(5_000, 0)).toBe(5_000);
    expect(acquireRetryDelay(5_000, 0.5)).toBe(8_000);
    expect(acquireRetryDelay(5_000, 0.999_999)).toBeLessThan(11_000);
  });
});

describe("leader election health check", () => {
  it("is healthy on a standby however old its observation", () => {
    expect(leaderHealthError(false, t0, 15_000, 20_000, t0 + 3_600_000, "lease")).toBeUndefined();
  });

  it("is healthy on a leader up to lease duration + tolerance after its last renew", () => {
    expect(leaderHealthError(true, t0, 15_000, 20_000, t0 + 35_000, "lease")).toBeUndefined();
  });

  it("fails on a leader whose last renew is older than lease duration + tolerance", () => {
    expect(leaderHealthError(true, t0, 15_000, 20_000, t0 + 35_001, "external-attacher-leader-x")?.message).toBe(
      "failed election to renew leadership on lease external-attacher-leader-x",
    );
  });
});
