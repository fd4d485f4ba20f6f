import { KubeClient } from "../kube/http-client";
import type { KubeConnection } from "../kube/kubeconfig";
import type { Logger } from "../log/logger";
import { LeaderElector } from "./leader-elector";
import { LeaseLock } from "./lease-lock";
import { leaderElectionIdentity, leaderElectionLeaseName } from "./lease-name";
import { resolveLeaseNamespace } from "./lease-namespace";

export interface AttacherLeaderElectionOptions {
  /** The API server connection; leader election builds its own client on it. */
  readonly connection: KubeConnection;
  /** The work client's User-Agent; leader election's requests add " leader-election" to it. */
  readonly userAgent: string;
  /** The CSI driver's name (GetPluginInfo): the Lease is named after it. */
  readonly driverName: string;
  /** --leader-election-namespace; "" resolves to POD_NAMESPACE, the service account's namespace, or "default". */
  readonly namespace: string;
  /** --leader-election-lease-duration. */
  readonly leaseDurationMs: number;
  /** --leader-election-renew-deadline. */
  readonly renewDeadlineMs: number;
  /** --leader-election-retry-period. */
  readonly retryPeriodMs: number;
  /** --leader-election-labels, put on the Lease by whoever takes it. */
  readonly labels: Readonly<Record<string, string>>;
  /** The ReleaseLeaderElectionOnExit feature gate. */
  readonly releaseOnExit: boolean;
  /** The process logger; lines carry the lease and our identity. */
  readonly log: Logger;
}

/**
 * createAttacherLeaderElector sets leader election up as upstream's
 * csi-attacher does through csi-lib-utils: a Lease named
 * `external-attacher-leader-<driver>` (sanitized), identity = hostname,
 * and a KubeClient of its own with no rate limiter, so a renewal never
 * waits behind work traffic throttled by --kube-api-qps.
 */
export function createAttacherLeaderElector(options: AttacherLeaderElectionOptions): LeaderElector {
  const client = new KubeClient({ connection: options.connection, userAgent: `${options.userAgent} leader-election` });
  const namespace = resolveLeaseNamespace({ flag: options.namespace, env: process.env });
  const leaseName = leaderElectionLeaseName(options.driverName);
  const lock = new LeaseLock({ client, namespace, name: leaseName, labels: options.labels });
  return new LeaderElector({
    lock,
    log: options.log,
    leaseName,
    namespace,
    identity: leaderElectionIdentity(),
    leaseDurationMs: options.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs,
    releaseOnCancel: options.releaseOnExit,
  });
}
