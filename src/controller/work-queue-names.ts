/**
 * The attacher's two work queues, by the names upstream gives them: they
 * are the `name` label of every `workqueue_*` series, which dashboards and
 * alerts written for the Go sidecar select on. The metrics need them before
 * the queues exist (a standby exports its queues' series at zero).
 */
export const workQueueNames = {
  volumeAttachments: "csi-attacher-va",
  persistentVolumes: "csi-attacher-pv",
} as const;
