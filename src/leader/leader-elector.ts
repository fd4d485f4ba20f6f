import { isNotFound } from "../kube/errors";
import type { Logger } from "../log/logger";
import { realClock, type Clock } from "../util/clock";
import { abortableSleep } from "../util/abortable-sleep";
import { withDeadline } from "../util/with-deadline";
import {
  acquireRetryDelay,
  claimRecord,
  isHeldBy,
  isLeaseValid,
  leaderHealthError,
  mayTakeLease,
  observe,
  releasedRecord,
  type Observation,
} from "./lease-decisions";
import type { LeaderElectionStatus } from "./leader-election-status";
import { resolveLeaderElectionOptions, type LeaderElectionOptions } from "./leader-election-options";
import type { LeaseLock } from "./lease-lock";
import type { LeaderElectionRecord } from "./lease-record";

/** The part of {@link LeaseLock} the elector uses; tests may pass their own. */
export type LeaseStore = Pick<LeaseLock, "describe" | "get" | "create" | "update">;

export interface LeaderElectorOptions extends LeaderElectionOptions {
  /** The Lease it contends for. */
  readonly lock: LeaseStore;
  /** Process logger; lines carry the lease and the identity. */
  readonly log: Logger;
  /** Time source and timers. Default the real clock. */
  readonly clock?: Clock;
  /** Random numbers in [0, 1) for the acquire jitter. Default Math.random. */
  readonly random?: () => number;
}

/**
 * resolveLeaderElectorOptions fills the defaults of every optional field:
 * the election's through resolveLeaderElectionOptions, which also refuses
 * timings under which leadership could overlap.
 */
function resolveLeaderElectorOptions(options: LeaderElectorOptions): Required<LeaderElectorOptions> {
  return { ...resolveLeaderElectionOptions(options), lock: options.lock, log: options.log, clock: options.clock ?? realClock, random: options.random ?? Math.random };
}

/**
 * How a leader election run ended: "lost" when a renew failed for longer
 * than the renew deadline (or someone else took the lease) — the caller must
 * exit 1 at once, as upstream does, because another replica may already be
 * working; "stopped" when the signal ended it (after releasing the lease if
 * configured).
 */
export type LeaderElectionOutcome = "lost" | "stopped";

/**
 * LeaderElector is client-go's LeaderElector on a Lease: try to take the
 * lease every retry period (jittered) until we hold it, then run the work
 * and renew every retry period; a renew that keeps failing for the renew
 * deadline ends leadership.
 *
 * Invariant: `observation` is the last Lease record we read or wrote and the
 * local time it was first seen in that form; "we are leader" means exactly
 * that its holder is our identity.
 */
export class LeaderElector implements LeaderElectionStatus {
  readonly name: string;
  private readonly options: Required<LeaderElectorOptions>;
  /** The process logger with the lease and our identity on every line. */
  private readonly log: Logger;
  private observation: Observation | undefined;
  private reportedLeader = "";

  constructor(options: LeaderElectorOptions) {
    this.options = resolveLeaderElectorOptions(options);
    this.name = this.options.leaseName;
    this.log = this.options.log.with({ lease: this.options.lock.describe(), identity: this.options.identity });
  }

  isLeader(): boolean {
    return isHeldBy(this.observation, this.options.identity);
  }

  check(): Error | undefined {
    const observedAt = this.observation?.observedAt ?? 0;
    return leaderHealthError(this.isLeader(), observedAt, this.options.leaseDurationMs, this.options.healthCheckToleranceMs, this.options.clock.monotonic(), this.name);
  }

  /**
   * run waits for the lease, then calls `lead` with a signal that aborts when
   * leadership ends or `signal` aborts, and keeps renewing until then.
   *
   * On `signal`, renewing goes on until `lead`'s promise settles (in-flight
   * work finishes under a valid lease), then the lease is released if
   * releaseOnCancel is set. On a lost lease, run resolves "lost" at once
   * without waiting for `lead`: the process must exit. A rejection of `lead`
   * ends leadership (without releasing) and rejects run.
   */
  async run(signal: AbortSignal, lead: (leading: AbortSignal) => Promise<void>): Promise<LeaderElectionOutcome> {
    if (!(await this.acquire(signal))) return "stopped";

    const leading = new AbortController();
    const forwardStop = () => leading.abort();
    signal.addEventListener("abort", forwardStop, { once: true });
    const stopRenewing = new AbortController();
    let failure: { error: unknown } | undefined;
    const work = Promise.resolve()
      .then(() => lead(leading.signal))
      .catch((e: unknown) => {
        failure = { error: e };
      })
      .finally(() => stopRenewing.abort());

    try {
      const renewal = await this.renewWhileLeading(stopRenewing.signal);
      if (renewal === "lost") {
        leading.abort();
        this.log.error("Stopped leading");
        return "lost";
      }
      await work;
      if (failure) throw failure.error;
      if (this.options.releaseOnCancel) await this.release();
      return "stopped";
    } finally {
      signal.removeEventListener("abort", forwardStop);
    }
  }

  /** acquire tries until it holds the lease (true) or `signal` aborts (false). */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info("Attempting to acquire leader lease");
    while (!signal.aborted) {
      const acquired = await withDeadline(signal, this.options.renewDeadlineMs, (attempt) => this.tryAcquireOrRenew(attempt), this.options.clock);
      this.maybeReportTransition();
      if (acquired) {
        this.log.info("Successfully acquired lease");
        this.log.v(2).info("Became leader, starting");
        return true;
      }
      this.log.v(4).info("Failed to acquire lease");
      await abortableSleep(acquireRetryDelay(this.options.retryPeriodMs, this.options.random()), signal, this.options.clock);
    }
    return false;
  }

  /**
   * renewWhileLeading renews every retry period until `stop` aborts
   * ("stopped") or one renew round fails for the whole renew deadline
   * ("lost"). Within a round a failed try is repeated every retry period.
   */
  private async renewWhileLeading(stop: AbortSignal): Promise<"lost" | "stopped"> {
    while (!stop.aborted) {
      const deadline = this.options.clock.monotonic() + this.options.renewDeadlineMs;
      let renewed = false;
      for (;;) {
        renewed = await withDeadline(stop, deadline - this.options.clock.monotonic(), (attempt) => this.tryAcquireOrRenew(attempt), this.options.clock);
        if (renewed || stop.aborted) break;
        const remaining = deadline - this.options.clock.monotonic();
        if (remaining <= 0) break;
        await abortableSleep(Math.min(this.options.retryPeriodMs, remaining), stop, this.options.clock);
        if (this.options.clock.monotonic() >= deadline) break;
      }
      this.maybeReportTransition();
      if (stop.aborted) return "stopped";
      if (!renewed) {
        this.log.info("Failed to renew lease", { renewDeadline: `${this.options.renewDeadlineMs}ms` });
        return "lost";
      }
      this.log.v(5).info("Successfully renewed lease");
      await abortableSleep(this.options.retryPeriodMs, stop, this.options.clock);
    }
    return "stopped";
  }

  /**
   * tryAcquireOrRenew is one attempt, as client-go's: a leader first writes
   * its renewal over the Lease it last saw (one PUT, no GET); otherwise, or
   * if that fails, read the Lease, create it if missing, and take it if it
   * is free, ours or expired.
   */
  private async tryAcquireOrRenew(attempt: AbortSignal): Promise<boolean> {
    const { identity, leaseDurationMs } = this.options;
    // The record's times are the wall clock's (other replicas and kubectl
    // read them); whether a claim ran out is judged on the monotonic one.
    const wallNow = this.options.clock.now();
    const now = this.options.clock.monotonic();

    if (this.observation !== undefined && this.isLeader() && isLeaseValid(this.observation, now)) {
      const renewal = claimRecord(this.observation.record, identity, leaseDurationMs, wallNow);
      try {
        await this.options.lock.update(renewal, attempt);
        this.setObserved(renewal);
        return true;
      } catch (e: unknown) {
        if (attempt.aborted) return false;
        this.log.error("Failed to update lock optimistically, falling back to slow path", { err: e });
      }
    }

    let current: LeaderElectionRecord;
    try {
      current = await this.options.lock.get(attempt);
    } catch (e: unknown) {
      if (attempt.aborted) return false;
      if (!isNotFound(e)) {
        this.log.error("Error retrieving resource lock", { err: e });
        return false;
      }
      const first = claimRecord(undefined, identity, leaseDurationMs, wallNow);
      try {
        await this.options.lock.create(first, attempt);
      } catch (createError: unknown) {
        if (!attempt.aborted) this.log.error("Error initially creating leader election record", { err: createError });
        return false;
      }
      this.setObserved(first);
      return true;
    }

    this.observation = observe(this.observation, current, this.options.clock.monotonic());
    if (!mayTakeLease(this.observation, identity, now)) {
      this.log.v(4).info("Lock is held by another replica and has not yet expired", { holder: current.holderIdentity });
      return false;
    }
    const claim = claimRecord(current, identity, leaseDurationMs, wallNow);
    try {
      await this.options.lock.update(claim, attempt);
    } catch (e: unknown) {
      if (!attempt.aborted) this.log.error("Failed to update lock", { err: e });
      return false;
    }
    this.setObserved(claim);
    return true;
  }

  /**
   * release gives the lease up (empty holder, 1 s duration) if we hold it,
   * so a standby need not wait it out. It reads the Lease first, as
   * client-go's release does: the stop can cut short a renewal that
   * kube-apiserver had already applied, and a PUT over our copy, a version
   * behind, only got 409 Conflict while the standby waited the whole lease
   * out (leader-election.test.ts on a loaded machine). Where client-go goes
   * by its last observation, the read decides here whether we hold it: a
   * Lease that names another holder is not ours to empty.
   */
  private async release(): Promise<void> {
    if (this.observation === undefined || !this.isLeader()) return;
    const { identity, renewDeadlineMs, clock } = this.options;
    const never = new AbortController().signal;
    try {
      const released = await withDeadline(
        never,
        renewDeadlineMs,
        async (attempt) => {
          const current = await this.options.lock.get(attempt);
          if (current.holderIdentity !== identity) {
            this.observation = observe(this.observation, current, clock.monotonic());
            return undefined;
          }
          const record = releasedRecord(current, clock.now());
          await this.options.lock.update(record, attempt);
          return record;
        },
        clock,
      );
      if (released === undefined) {
        this.log.info("Lease held by another replica, nothing to release", { holder: this.observation?.record.holderIdentity });
        return;
      }
      this.setObserved(released);
      this.log.info("Released leader lease");
    } catch (e: unknown) {
      this.log.error("Failed to release lock", { err: e });
    }
  }

  private setObserved(record: LeaderElectionRecord): void {
    this.observation = { record, observedAt: this.options.clock.monotonic() };
  }

  /** Logs the holder whenever it changes from the last one reported (client-go's OnNewLeader). */
  private maybeReportTransition(): void {
    const holder = this.observation?.record.holderIdentity ?? "";
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    this.log.v(3).info("New leader detected", { leader: holder });
  }
}

