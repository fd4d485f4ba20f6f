/** The conditions the attacher must meet before `/readyz` answers 200. */
export type ReadinessCondition = "driver-probed" | "caches-synced";

/**
 * Readiness tracks what the attacher still waits for before it can do its
 * work: the driver answered Probe, and the first lists of VAs, PVs and
 * CSINodes have completed. It only moves forward; a process that loses the
 * driver or its caches exits instead.
 */
export class Readiness {
  private readonly pending: Set<ReadinessCondition>;

  constructor(conditions: readonly ReadinessCondition[] = ["driver-probed", "caches-synced"]) {
    this.pending = new Set(conditions);
  }

  /** Records that `condition` is met. */
  satisfy(condition: ReadinessCondition): void {
    this.pending.delete(condition);
  }

  /** The conditions not met yet, in the order they were declared; empty when ready. */
  missing(): readonly ReadinessCondition[] {
    return [...this.pending];
  }
}
