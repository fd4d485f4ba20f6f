/**
 * LeaderElectionRecord is what a Lease's spec says about leadership, as
 * client-go's resourcelock reads it: absent fields read as "" or 0.
 * Times are kept as the MicroTime strings the server stores, so a record
 * read back compares equal to the one written.
 */
export interface LeaderElectionRecord {
  /** Who holds the lease; "" when nobody does (never taken, or released). */
  readonly holderIdentity: string;
  /** How long the holder's claim lasts after renewTime, in whole seconds. */
  readonly leaseDurationSeconds: number;
  /** When the current holder took the lease (MicroTime), "" if unset. */
  readonly acquireTime: string;
  /** When the holder last renewed (MicroTime), "" if unset. */
  readonly renewTime: string;
  /** How many times the lease changed hands. */
  readonly leaseTransitions: number;
}

/** LeaseSpec is the coordination.k8s.io/v1 Lease spec as it goes over the wire. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/**
 * formatMicroTime renders a time the way metav1.MicroTime marshals it:
 * RFC 3339 in UTC with exactly six fractional digits
 * (`2006-01-02T15:04:05.000000Z`). JavaScript clocks have millisecond
 * resolution, so the last three digits are zeros.
 */
export function formatMicroTime(epochMs: number): string {
  const iso = new Date(epochMs).toISOString(); // 2006-01-02T15:04:05.000Z
  return `${iso.slice(0, -1)}000Z`;
}

/** recordFromLeaseSpec reads a Lease spec; missing or mistyped fields read as client-go's zero values. */
export function recordFromLeaseSpec(spec: unknown): LeaderElectionRecord {
  const fields = spec !== null && typeof spec === "object" ? (spec as Record<string, unknown>) : {};
  const text = (value: unknown): string => (typeof value === "string" ? value : "");
  const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);
  return {
    holderIdentity: text(fields["holderIdentity"]),
    leaseDurationSeconds: count(fields["leaseDurationSeconds"]),
    acquireTime: text(fields["acquireTime"]),
    renewTime: text(fields["renewTime"]),
    leaseTransitions: count(fields["leaseTransitions"]),
  };
}

/**
 * leaseSpecFromRecord is the spec written for a record. Like client-go it
 * always writes holderIdentity (possibly ""), the duration and the
 * transitions; an unset time is left out rather than sent as "".
 */
export function leaseSpecFromRecord(record: LeaderElectionRecord): LeaseSpec {
  const spec: LeaseSpec = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
  };
  if (record.acquireTime !== "") spec.acquireTime = record.acquireTime;
  if (record.renewTime !== "") spec.renewTime = record.renewTime;
  return spec;
}

/** sameRecord tells whether two records are identical field by field (client-go compares the raw records). */
export function sameRecord(a: LeaderElectionRecord, b: LeaderElectionRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}
