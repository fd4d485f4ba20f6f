/**
 * The node's kubelet, as this machine kind lets it run (issue 27, checked
 * 2026-11-26): as root on a cgroup v1 host without systemd, so
 * `failCgroupV1: false` and cgroupfs; swap may be on (`failSwapOn: false`);
 * the sandbox lacks CAP_SYS_RESOURCE, so it must not lower its own OOM score
 * (`oomScoreAdj: 0`). With no client certificates the API server reaches it
 * as anonymous, which `AlwaysAllow` admits (logs and exec), on loopback only.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnManaged, type ManagedProcess } from "../managed-process";
import { containerdSocket } from "./containerd";

export interface KubeletOptions {
  readonly binary: string;
  /** Directory for its config and logs. */
  readonly dir: string;
  /** kubeconfig it registers the Node and reads pods with. */
  readonly kubeconfig: string;
  /** The Node's name. */
  readonly nodeName: string;
  /** Its API port, which kube-apiserver dials for logs and exec. */
  readonly port: number;
  /** Its /healthz port. */
  readonly healthzPort: number;
}

/** kubeletConfiguration is its KubeletConfiguration (v1beta1), as JSON (YAML's subset). */
export function kubeletConfiguration(options: Pick<KubeletOptions, "port" | "healthzPort">): string {
  return JSON.stringify(
    {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      failCgroupV1: false,
      failSwapOn: false,
      oomScoreAdj: 0,
      cgroupDriver: "cgroupfs",
      containerRuntimeEndpoint: `unix://${containerdSocket}`,
      address: "127.0.0.1",
      port: options.port,
      readOnlyPort: 0,
      healthzBindAddress: "127.0.0.1",
      healthzPort: options.healthzPort,
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false }, x509: {} },
      authorization: { mode: "AlwaysAllow" },
      // The images are imported, not pulled: a full disk must not collect them, nor evict test pods.
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: { "memory.available": "50Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
      // Status reaches the API at once rather than on the 10 s default beat.
      nodeStatusUpdateFrequency: "2s",
      serializeImagePulls: false,
    },
    null,
    2,
  );
}

/** startKubelet writes its configuration and starts it; it registers its Node itself. */
export function startKubelet(options: KubeletOptions): ManagedProcess {
  const config = join(options.dir, "kubelet-config.json");
  writeFileSync(config, kubeletConfiguration(options));
  return spawnManaged({
    name: "kubelet",
    logDir: options.dir,
    command: [
      options.binary,
      `--config=${config}`,
      `--kubeconfig=${options.kubeconfig}`,
      `--hostname-override=${options.nodeName}`,
      // Its InternalIP: kube-apiserver's --kubelet-preferred-address-types picks it for logs and exec.
      "--node-ip=127.0.0.1",
      "-v=2",
    ],
  });
}
