/**
 * The csi-attacher container's args from the public charts and manifests of
 * six CSI drivers, each list verbatim as its source has it, so the tests can
 * show that a Deployment written for the Go sidecar starts this one
 * unchanged. Where the source is a Helm template, the list is rendered with
 * the chart's default values (named per entry); `$(VAR)` references are left
 * for {@link containerArgs}, which expands them as the kubelet does.
 */

/** DriverChartArgs is one driver's csi-attacher container, as its chart deploys it. */
export interface DriverChartArgs {
  /** The CSI driver's name; the fake driver of the test takes it. */
  readonly driverName: string;
  /** Where the args come from: repository, file, and the version or commit read. */
  readonly source: string;
  /** The container's `args:`, verbatim. */
  readonly args: readonly string[];
  /** The container's `env:` as the pod gets it (downward-API values as they would resolve in `namespace`). */
  readonly env: Readonly<Record<string, string>>;
  /** The socket path inside the container (the socket-dir mount), which the test's socket stands in for. */
  readonly socketInContainer: string;
  /** The namespace the chart installs the controller into. */
  readonly namespace: string;
}

export const driverChartArgs: readonly DriverChartArgs[] = [
  {
    driverName: "ebs.csi.aws.com",
    // kubernetes-sigs/aws-ebs-csi-driver deploy/kubernetes/base/controller.yaml (rendered from
    // charts/aws-ebs-csi-driver/templates/controller.yaml by `make update`), commit 2cc342fe699f,
    // csi-attacher image v4.4.2-eks-1-28-9.
    source: "kubernetes-sigs/aws-ebs-csi-driver deploy/kubernetes/base/controller.yaml @2cc342fe (chart-rendered, attacher v4.4.2-eks-1-28-9)",
    args: ["--timeout=60s", "--csi-address=$(ADDRESS)", "--v=2", "--leader-election=true", "--kube-api-qps=20", "--kube-api-burst=100", "--worker-threads=100"],
    env: { ADDRESS: "/var/lib/csi/sockets/pluginproxy/csi.sock" },
    socketInContainer: "/var/lib/csi/sockets/pluginproxy/csi.sock",
    namespace: "kube-system",
  },
  {
    driverName: "pd.csi.storage.gke.io",
    // kubernetes-sigs/gcp-compute-persistent-disk-csi-driver deploy/kubernetes/base/controller/controller.yaml, commit 6d08ba83d8f1.
    source: "kubernetes-sigs/gcp-compute-persistent-disk-csi-driver deploy/kubernetes/base/controller/controller.yaml @6d08ba83",
    args: ["--v=5", "--csi-address=/csi/csi.sock", "--http-endpoint=:22012", "--leader-election", "--leader-election-namespace=$(PDCSI_NAMESPACE)", "--timeout=250s"],
    env: { PDCSI_NAMESPACE: "gce-pd-csi-driver" },
    socketInContainer: "/csi/csi.sock",
    namespace: "gce-pd-csi-driver",
  },
  {
    driverName: "disk.csi.azure.com",
    // kubernetes-sigs/azuredisk-csi-driver charts/latest/azuredisk-csi-driver/templates/csi-azuredisk-controller.yaml,
    // commit 4a49161e0e8f, rendered with .Release.Namespace=kube-system and controller.attacherWorkerThreads=1000
    // (the chart's values.yaml default). Single-dash flags as the chart writes them.
    source: "kubernetes-sigs/azuredisk-csi-driver charts/latest/azuredisk-csi-driver/templates/csi-azuredisk-controller.yaml @4a49161e (rendered)",
    args: [
      "-v=2",
      "-csi-address=$(ADDRESS)",
      "-timeout=1200s",
      "-leader-election",
      "--leader-election-namespace=kube-system",
      "-worker-threads=1000",
      "-kube-api-qps=50",
      "-kube-api-burst=100",
    ],
    env: { ADDRESS: "/csi/csi.sock" },
    socketInContainer: "/csi/csi.sock",
    namespace: "kube-system",
  },
  {
    driverName: "driver.longhorn.io",
    // longhorn/longhorn-manager csi/deployment.go NewAttacherDeployment (Longhorn deploys its CSI sidecars from
    // code, not from the longhorn/longhorn chart), commit 561bc7d1cafe; KubeAPIQPS=50 and KubeAPIBurst=100 from
    // types/types.go; ADDRESS is GetInContainerCSISocketFilePath() = /csi/csi.sock; POD_NAMESPACE from the downward API.
    source: "longhorn/longhorn-manager csi/deployment.go @561bc7d1 (attacher longhornio/csi-attacher:v4.4.2)",
    args: ["--v=2", "--csi-address=$(ADDRESS)", "--timeout=1m50s", "--leader-election", "--leader-election-namespace=$(POD_NAMESPACE)", "--kube-api-qps=50", "--kube-api-burst=100"],
    env: { ADDRESS: "/csi/csi.sock", POD_NAMESPACE: "longhorn-system" },
    socketInContainer: "/csi/csi.sock",
    namespace: "longhorn-system",
  },
  {
    driverName: "rbd.csi.ceph.com",
    // ceph/ceph-csi charts/ceph-csi-rbd/templates/provisioner-deployment.yaml, commit 37018a2eefa4, rendered with
    // values.yaml (commit 927fe867d738): sidecarLogLevel=1, provisionerSocketFile=csi-provisioner.sock, extraArgs=[].
    source: "ceph/ceph-csi charts/ceph-csi-rbd/templates/provisioner-deployment.yaml @37018a2e (rendered with values.yaml @927fe867)",
    args: ["--v=1", "--csi-address=$(ADDRESS)", "--leader-election=true", "--retry-interval-start=500ms", "--default-fstype=ext4"],
    env: { ADDRESS: "unix:///csi/csi-provisioner.sock" },
    socketInContainer: "/csi/csi-provisioner.sock",
    namespace: "ceph-csi-rbd",
  },
  {
    driverName: "hostpath.csi.k8s.io",
    // kubernetes-csi/csi-driver-host-path deploy/kubernetes-1.30/hostpath/csi-hostpath-plugin.yaml, commit f459b5249970,
    // csi-attacher image v4.8.0.
    source: "kubernetes-csi/csi-driver-host-path deploy/kubernetes-1.30/hostpath/csi-hostpath-plugin.yaml @f459b524 (attacher v4.8.0)",
    args: ["--v=5", "--csi-address=/csi/csi.sock"],
    env: {},
    socketInContainer: "/csi/csi.sock",
    namespace: "default",
  },
];

/**
 * expandKubeletReferences replaces `$(VAR)` with the container's env value as
 * the kubelet does: `$$` stands for a literal `$`, and a reference to an
 * undefined variable stays as written.
 */
export function expandKubeletReferences(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (whole, name: string | undefined) => {
    if (name === undefined) return "$";
    return Object.hasOwn(env, name) ? (env[name] ?? whole) : whole;
  });
}

/**
 * containerArgs is what the attacher's argv would be in the pod, with the
 * test's socket where the chart's socket-dir mount puts the driver's: each
 * `$(VAR)` expanded, then the in-container socket path replaced.
 */
export function containerArgs(chart: DriverChartArgs, socketPath: string): string[] {
  return chart.args.map((arg) => expandKubeletReferences(arg, chart.env).replaceAll(chart.socketInContainer, socketPath));
}

/** containerEnv is the container's env with the same socket substitution, for the attacher process. */
export function containerEnv(chart: DriverChartArgs, socketPath: string): Record<string, string> {
  return Object.fromEntries(Object.entries(chart.env).map(([name, value]) => [name, value.replaceAll(chart.socketInContainer, socketPath)]));
}
