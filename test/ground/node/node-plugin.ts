/**
 * A CSI driver's node side on the node ground: Kubernetes' mock driver as a
 * host process, serving its node service where the kubelet expects driver
 * sockets and answering the kubelet's plugin registration, as
 * node-driver-registrar does beside a real driver's node plugin. The
 * kubelet then calls NodeGetInfo and writes the driver and its node ID into
 * the Node's CSINode, and stages and publishes the volumes of its pods.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { AdminClient, KubeObject } from "../admin-client";
import { spawnManaged, waitForCondition, type ManagedProcess } from "../managed-process";
import { fixedHostPaths } from "./host-paths";

export interface NodePluginOptions {
  /** The mock driver's binary, `ComponentPaths.mockCsiDriver`. */
  readonly binary: string;
  readonly driverName: string;
  readonly nodeName: string;
  readonly admin: AdminClient;
  readonly logDir: string;
}

interface CsiNodeJson extends KubeObject {
  spec?: { drivers?: { name: string; nodeID: string }[] };
}

/**
 * startNodePlugin starts the node side and resolves with it, the socket it
 * serves CSI on and the node ID once the kubelet has registered the driver
 * in the CSINode.
 */
export async function startNodePlugin(options: NodePluginOptions): Promise<{ process: ManagedProcess; socket: string; nodeId: string }> {
  const socketDir = join(fixedHostPaths.kubeletRoot, "plugins", options.driverName);
  mkdirSync(socketDir, { recursive: true });
  const socket = join(socketDir, "csi.sock");
  const process = spawnManaged({
    name: `node-plugin-${options.driverName}`,
    logDir: options.logDir,
    command: [
      options.binary,
      `--endpoint=${socket}`,
      `--name=${options.driverName}`,
      `--kubelet-registration-path=${join(fixedHostPaths.kubeletRoot, "plugins_registry", `${options.driverName}-reg.sock`)}`,
    ],
  });
  let nodeId: string | undefined;
  await waitForCondition(
    async () => {
      const csiNode = await options.admin.get<CsiNodeJson>(`/apis/storage.k8s.io/v1/csinodes/${options.nodeName}`);
      nodeId = csiNode.spec?.drivers?.find((driver) => driver.name === options.driverName)?.nodeID;
      return nodeId !== undefined;
    },
    { description: `the kubelet to register ${options.driverName} in CSINode ${options.nodeName}`, timeoutMs: 30_000, intervalMs: 200, watch: [process] },
  );
  return { process, socket, nodeId: nodeId ?? "" };
}
