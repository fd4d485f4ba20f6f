import { formatMicroTime, sameRecord, type LeaderElectionRecord } from "./lease-record";

/**
 * The pure decisions of client-go's LeaderElector, apart from the loop and
 * the API calls so they can be tested with plain numbers for clocks.
 *
 * Lease expiry is judged by the LOCAL monotonic clock: a candidate remembers when it
 * last saw the record change (`observedAt`) and waits the record's
 * leaseDurationSeconds from then. The renewTime written by another machine
 * is never compared with our clock, so clock skew between replicas does not
 * matter; only the rate of the clocks does.
 */

/** Observation is the last record read or written, and when (local monotonic ms) it was first seen in that form. */
export interface Observation {
  readonly record: LeaderElectionRecord;
  readonly observedAt: number;
}

/** JitterFactor is client-go's: the acquire loop waits retryPeriod plus up to 1.2 x retryPeriod. */
export const jitterFactor = 1.2;

/**
 * observe folds a freshly read record into the observation. The clock only
 * restarts when the record differs from what was seen before: a holder that
 * renews changes renewTime every time, one that is dead does not.
 */
export function observe(previous: Observation | undefined, record: LeaderElectionRecord, now: number): Observation {
  if (previous !== undefined && sameRecord(previous.record, record)) return previous;
  return { record, observedAt: now };
}

/** isLeaseValid: the observed holder's claim has not yet run out by our clock. */
export function isLeaseValid(observation: Observation, now: number): boolean {
  return observation.observedAt + observation.record.leaseDurationSeconds * 1000 > now;
}

/** isHeldBy: the observed record names `identity` as holder. */
export function isHeldBy(observation: Observation | undefined, identity: string): boolean {
  return observation !== undefined && observation.record.holderIdentity === identity;
}

/**
 * mayTakeLease: we may write ourselves into the lease. True when nobody
 * holds it (released, or never taken), when we hold it, or when the
 * holder's claim has run out.
 */
export function mayTakeLease(observation: Observation, identity: string, now: number): boolean {
  const holder = observation.record.holderIdentity;
  return holder === "" || holder === identity || !isLeaseValid(observation, now);
}

/**
 * claimRecord is the record we write to take or keep the lease. Renewing
 * keeps acquireTime and the transition count; taking it from someone else
 * (or from nobody) counts one more transition. With no lease at all the
 * count starts at 0, as client-go's create does.
 */
export function claimRecord(current: LeaderElectionRecord | undefined, identity: string, leaseDurationMs: number, now: number): LeaderElectionRecord {
  const nowText = formatMicroTime(now);
  // client-go truncates the duration to whole seconds.
  const leaseDurationSeconds = Math.floor(leaseDurationMs / 1000);
  if (current === undefined) {
    return { holderIdentity: identity, leaseDurationSeconds, acquireTime: nowText, renewTime: nowText, leaseTransitions: 0 };
  }
  if (current.holderIdentity === identity) {
    return { holderIdentity: identity, leaseDurationSeconds, acquireTime: current.acquireTime, renewTime: nowText, leaseTransitions: current.leaseTransitions };
  }
  return { holderIdentity: identity, leaseDurationSeconds, acquireTime: nowText, renewTime: nowText, leaseTransitions: current.leaseTransitions + 1 };
}

/**
 * releasedRecord is what a leader writes when it steps down (client-go's
 * release with ReleaseOnCancel): no holder, a one-second duration, both
 * times now, the transition count kept. A standby sees the empty holder
 * and takes the lease on its next try instead of waiting out the duration.
 */
export function releasedRecord(current: LeaderElectionRecord, now: number): LeaderElectionRecord {
  const nowText = formatMicroTime(now);
  return { holderIdentity: "", leaseDurationSeconds: 1, acquireTime: nowText, renewTime: nowText, leaseTransitions: current.leaseTransitions };
}

/**
 * acquireRetryDelay is the wait between two acquire attempts: client-go's
 * wait.JitterUntil with JitterFactor 1.2, i.e. retryPeriod plus a random
 * share of up to 1.2 x retryPeriod, so standbys do not all ask at once.
 */
export function acquireRetryDelay(retryPeriodMs: number, random: number): number {
  return retryPeriodMs + random * jitterFactor * retryPeriodMs;
}

/**
 * leaderHealthError is the HealthzAdaptor's verdict: a standby is always
 * healthy; a leader whose last successful renew is older than the lease
 * duration plus `toleranceMs` should have stepped down long ago (a stuck
 * loop), so it reports itself unhealthy and the kubelet restarts it.
 */
export function leaderHealthError(leading: boolean, lastRenewAt: number, leaseDurationMs: number, toleranceMs: number, now: number, leaseName: string): Error | undefined {
  if (!leading) return undefined;
  if (now - lastRenewAt > leaseDurationMs + toleranceMs) {
    return new Error(`failed election to renew leadership on lease ${leaseName}`);
  }
  return undefined;
}
