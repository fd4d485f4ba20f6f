/**
 * ForcedSyncs is the set of VA names the reconciler found out of step with
 * the driver while settled (see isSettled: no work on them under way or
 * owed): their next sync must call the driver even though the VA's
 * status says there is nothing to do (attached VA whose volume the driver no
 * longer has published, or a detached-looking VA still published).
 *
 * Invariant: a name is in the set from the reconciler's `mark` until the
 * first sync of that name `take`s it; a forced sync is consumed exactly once,
 * so a driver that keeps disagreeing costs one extra call per reconcile
 * period, never a loop.
 */
export class ForcedSyncs {
  private readonly names = new Set<string>();

  /** mark asks for one forced sync of `name`. */
  mark(name: string): void {
    this.names.add(name);
  }

  /** take answers whether a forced sync of `name` was asked for, and consumes it. */
  take(name: string): boolean {
    return this.names.delete(name);
  }
}
