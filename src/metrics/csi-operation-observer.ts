/**
 * What the CSI layer reports of each finished call: the contract between
 * the operation metrics interceptor (src/csi/) and the
 * `csi_sidecar_operations_seconds` histogram that records it (here).
 */

/** One finished CSI call, as the operation metrics record it. */
export interface CsiOperation {
  /** The full gRPC method, such as `/csi.v1.Controller/ControllerPublishVolume`. */
  readonly method: string;
  /** The gRPC code name as Go prints it (`OK`, `DeadlineExceeded`), or `unknown-non-grpc` for an error that is not a gRPC status. */
  readonly code: string;
  /** How long the call took, in seconds. */
  readonly seconds: number;
  /** Whether the call was for a migrated in-tree volume (the call's `migratedVolumeKey` context value). */
  readonly migrated: boolean;
}

/** CsiOperationObserver receives every finished CSI call. */
export interface CsiOperationObserver {
  observe(operation: CsiOperation): void;
}
