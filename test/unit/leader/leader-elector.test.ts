import { describe, expect, it } from "bun:test";
import { KubeApiError } from "../../../src/kube/errors";
import { LeaderElector, type LeaseStore } from "../../../src/leader/leader-elector";
import type { LeaderElectionRecord } from "../../../src/leader/lease-record";
import { Logger } from "../../../src/log/logger";
import { FakeClock } from "../queue/fake-clock";
import { settle, track } from "../queue/settle";

/**
 * A lease kept in memory, with kube-apiserver's optimistic concurrency: an
 * update over an older copy than the last read or written gets 409
 * Conflict, as LeaseLock's PUT does. The API server's semantics are tested
 * end to end; this only drives the loop.
 */
class MemoryLease implements LeaseStore {
  record: LeaderElectionRecord | undefined;
  failWrites = false;
  writes: LeaderElectionRecord[] = [];
  /** The next update is applied but its reply never comes: it rejects once its call is aborted, and the caller's copy stays a version behind. */
  loseNextReply = false;
  private version = 0;
  private versionSeen = 0;

  describe(): string {
    return "default/lease";
  }
  async get(): Promise<LeaderElectionRecord> {
    if (this.record === undefined) throw new KubeApiError(404, "NotFound", "leases \"lease\" not found");
    this.versionSeen = this.version;
    return this.record;
  }
  async create(record: LeaderElectionRecord): Promise<void> {
    this.write(record);
    this.versionSeen = this.version;
  }
  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    if (this.versionSeen !== this.version) throw new KubeApiError(409, "Conflict", "the object has been modified");
    this.write(record);
    if (this.loseNextReply) {
      this.loseNextReply = false;
      await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
      throw new DOMException("The operation was aborted", "AbortError");
    }
    this.versionSeen = this.version;
  }
  /** overwrite is a write by someone else (another replica, an administrator). */
  overwrite(record: LeaderElectionRecord): void {
    this.record = record;
    this.version++;
  }
  private write(record: LeaderElectionRecord): void {
    if (this.failWrites) throw new KubeApiError(500, "InternalError", "etcd is sad");
    this.record = record;
    this.writes.push(record);
    this.version++;
  }
}

function elector(lease: MemoryLease, clock: FakeClock, releaseOnCancel = false): LeaderElector {
  return new LeaderElector({
    lock: lease,
    log: new Logger({ sink: () => {} }),
    clock,
    random: () => 0,
    leaseName: "lease",
    namespace: "default",
    identity: "me",
    leaseDurationMs: 4_000,
    renewDeadlineMs: 3_000,
    retryPeriodMs: 1_000,
    releaseOnCancel,
  });
}

/** Moves the fake clock forward in small steps, letting the loop's promises run between them. */
async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 100) {
    clock.step(100);
    await settle();
  }
}

/** A standby elector running against a Lease that "other" holds (4 s, 7 transitions); hasStarted says whether it began leading. */
function standbyBehindOther() {
  const clock = new FakeClock();
  const lease = new MemoryLease();
  const held: LeaderElectionRecord = { holderIdentity: "other", leaseDurationSeconds: 4, acquireTime: "", renewTime: "r0", leaseTransitions: 7 };
  lease.record = held;
  let started = false;
  void elector(lease, clock).run(new AbortController().signal, async () => {
    started = true;
  });
  return { clock, lease: lease as MemoryLease & { record: LeaderElectionRecord }, hasStarted: () => started };
}

describe("leader elector loop", () => {
  it("creates a missing lease, starts leading, and renews every retry period", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const le = elector(lease, clock);
    const stop = new AbortController();
    let leadingSignal: AbortSignal | undefined;
    const run = track(le.run(stop.signal, async (leading) => {
      leadingSignal = leading;
      await new Promise<void>((resolve) => leading.addEventListener("abort", () => resolve()));
    }));
    await settle();
    expect(le.isLeader()).toBe(true);
    expect(leadingSignal?.aborted).toBe(false);
    await advance(clock, 3_000);
    // One create, one immediate renew, then one renew per retry period.
    expect(lease.writes.length).toBe(5);
    expect(lease.record?.holderIdentity).toBe("me");
    stop.abort();
    expect(await run.promise).toBe("stopped");
  });

  it("reports the lease lost once renewals have failed for the renew deadline, without waiting for the work", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const le = elector(lease, clock);
    const run = track(le.run(new AbortController().signal, () => new Promise<void>(() => {})));
    await settle();
    lease.failWrites = true;
    await advance(clock, 3_000);
    expect(run.value()).toBeUndefined();
    await advance(clock, 1_500);
    expect(run.value()).toBe("lost");
  });

  it("keeps a standby waiting while the holder renews, and takes over once it falls silent for the lease duration", async () => {
    const { clock, lease, hasStarted } = standbyBehindOther();
    for (let i = 1; i <= 5; i++) {
      lease.record = { ...lease.record, renewTime: `r${i}` };
      await advance(clock, 1_000);
    }
    expect(hasStarted()).toBe(false);
    await advance(clock, 4_000 + 2_000);
    expect(hasStarted()).toBe(true);
    expect(lease.record).toMatchObject({ holderIdentity: "me", leaseTransitions: 8 });
  });

  it("never takes a renewed lease from its holder when the wall clock jumps forward: expiry is judged on the monotonic clock", async () => {
    const { clock, lease, hasStarted } = standbyBehindOther();
    // The holder renews every 2 s, well inside its 4 s; the standby reads the same record twice between renewals.
    for (let i = 1; i <= 5; i++) {
      await advance(clock, 1_000);
      if (i === 3) clock.stepWall(3_600_000);
      await advance(clock, 1_000);
      lease.record = { ...lease.record, renewTime: `r${i}` };
    }
    expect(hasStarted()).toBe(false);
    expect(lease.record.holderIdentity).toBe("other");
  });

  it("keeps leading when the wall clock jumps past its renew deadline while a renewal is failing, and stamps the Lease with the wall clock", async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 26, 12, 0, 0));
    const lease = new MemoryLease();
    const le = elector(lease, clock);
    const run = track(le.run(new AbortController().signal, () => new Promise<void>(() => {})));
    await settle();
    lease.failWrites = true;
    await advance(clock, 1_000);
    clock.stepWall(3_600_000);
    await advance(clock, 1_000);
    lease.failWrites = false;
    await advance(clock, 3_000);
    expect(run.value()).toBeUndefined();
    expect(le.isLeader()).toBe(true);
    expect(lease.record?.renewTime.startsWith("2026-11-26T13:00:0")).toBe(true);
  });

  it("on stop lets the work finish under a renewed lease, however long past the lease duration it drains, then releases it once", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const le = elector(lease, clock, true);
    const stop = new AbortController();
    let finishWork = () => {};
    const run = track(le.run(stop.signal, () => new Promise<void>((resolve) => (finishWork = resolve))));
    await settle();
    stop.abort();
    const writesBefore = lease.writes.length;
    await advance(clock, 12_000);
    expect(lease.writes.length).toBeGreaterThan(writesBefore);
    expect(lease.writes.every((record) => record.holderIdentity === "me")).toBe(true);
    expect(run.value()).toBeUndefined();
    finishWork();
    await advance(clock, 100);
    expect(run.value()).toBe("stopped");
    expect(lease.record).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
    expect(lease.writes.filter((record) => record.holderIdentity === "")).toHaveLength(1);
    expect(le.isLeader()).toBe(false);
  });

  /** A releasing leader whose last renewal kube-apiserver applied but whose reply is still to come. */
  async function leaderWithRenewalInFlight() {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const le = elector(lease, clock, true);
    const stop = new AbortController();
    const run = track(le.run(stop.signal, (leading) => new Promise<void>((resolve) => leading.addEventListener("abort", () => resolve()))));
    await settle();
    lease.loseNextReply = true;
    await advance(clock, 1_000);
    expect(lease.loseNextReply).toBe(false);
    return { clock, lease, le, stop, run };
  }

  // A stop that cut short a renewal kube-apiserver had already applied left
  // the elector's copy a version behind: its release got 409 Conflict and
  // the standby waited the whole lease out (leader-election.test.ts, loaded machine).
  it("releases the lease on stop even when the stop cut short a renewal the server had applied", async () => {
    const { clock, lease, le, stop, run } = await leaderWithRenewalInFlight();
    stop.abort();
    await advance(clock, 100);
    expect(run.value()).toBe("stopped");
    expect(lease.record).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
    expect(le.isLeader()).toBe(false);
  });

  it("on stop leaves alone a lease that names another holder when it reads it to release", async () => {
    const { clock, lease, le, stop, run } = await leaderWithRenewalInFlight();
    const intruder = { holderIdentity: "intruder", leaseDurationSeconds: 3600, acquireTime: "a", renewTime: "r", leaseTransitions: 9 };
    lease.overwrite(intruder);
    stop.abort();
    await advance(clock, 100);
    expect(run.value()).toBe("stopped");
    expect(lease.record).toEqual(intruder);
    expect(le.isLeader()).toBe(false);
  });

  it("keeps the lease (no release) when the work fails instead of finishing", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const le = elector(lease, clock, true);
    const stop = new AbortController();
    let failWork = () => {};
    const run = le.run(stop.signal, () => new Promise<void>((_resolve, reject) => (failWork = () => reject(new Error("worker crashed")))));
    const outcome = run.then(
      () => "resolved",
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    await settle();
    stop.abort();
    failWork();
    await advance(clock, 100);
    expect(await outcome).toBe("worker crashed");
    expect(lease.record?.holderIdentity).toBe("me");
  });

  it("never releases a lease it lost: another replica may hold it by then", async () => {
    const clock = new FakeClock();
    const lease = new MemoryLease();
    const le = elector(lease, clock, true);
    const stop = new AbortController();
    const run = track(le.run(stop.signal, () => new Promise<void>(() => {})));
    await settle();
    lease.failWrites = true;
    await advance(clock, 4_500);
    expect(run.value()).toBe("lost");
    lease.failWrites = false;
    const writes = lease.writes.length;
    stop.abort();
    await advance(clock, 2_000);
    expect(lease.writes.length).toBe(writes);
  });
});
