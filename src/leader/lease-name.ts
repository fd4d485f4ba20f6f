import { hostname as osHostname } from "node:os";

/**
 * sanitizeLeaderElectionName makes a driver name or a hostname usable as a
 * Lease name or holder identity the way csi-lib-utils' leaderelection does:
 * every character outside `[a-zA-Z0-9-]` becomes `-`, and a trailing `-`
 * gets an `X` appended (so dots become dashes: `hostpath.csi.k8s.io` ->
 * `hostpath-csi-k8s-io`).
 */
export function sanitizeLeaderElectionName(name: string): string {
  const replaced = name.replace(/[^a-zA-Z0-9-]/g, "-");
  return replaced.endsWith("-") ? `${replaced}X` : replaced;
}

/**
 * leaderElectionLeaseName is the Lease every replica of one driver's
 * attacher contends for: `external-attacher-leader-<driver>`, sanitized as a
 * whole, as upstream names it (so `hostpath.csi.k8s.io` gives
 * `external-attacher-leader-hostpath-csi-k8s-io`).
 */
export function leaderElectionLeaseName(driverName: string): string {
  return sanitizeLeaderElectionName(`external-attacher-leader-${driverName}`);
}

/**
 * leaderElectionIdentity is this replica's holder identity: the hostname
 * (in a pod, the pod's name), sanitized like the lease name, as
 * csi-lib-utils does. Upstream offers no flag to override it.
 */
export function leaderElectionIdentity(hostname: string = osHostname()): string {
  return hostname === "" ? "" : sanitizeLeaderElectionName(hostname);
}
