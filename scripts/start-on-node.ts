/**
 * `bun run start --with-node`: the Deployment as operators apply it, run by
 * a real kubelet and containerd on the test ground made a node
 * (test/ground/node), with a demo Pod whose volume the attacher attaches.
 * Needs root and Debian's containerd, iptables and containernetworking-plugins;
 * a fresh cluster each time (the node's state does not survive it).
 */
import { $ } from "bun";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { AdminClient } from "../test/ground/admin-client";
import { ensureComponents } from "../test/ground/components";
import { mockDriverDeployment } from "../test/ground/node/mock-driver-deployment";
import { nodeClusterOptions, nodeImages, startNodeGround, type NodeGround } from "../test/ground/node/node-ground";
import { startNodePlugin } from "../test/ground/node/node-plugin";
import { nodeGroundProblem } from "../test/ground/node/node-prerequisites";
import { startTestCluster, type TestCluster } from "../test/ground/test-cluster";
import { applyObjects } from "../test/ground/apply-manifest";
import { stopAllManaged, type StopSignal } from "../test/ground/managed-process";
import { persistentVolume } from "../test/ground/objects";
import { attachRequiredCsiDriver, claimFor, claimingPod, podPaths } from "../test/ground/pod-objects";
import { readRbacManifest } from "../test/ground/rbac-manifest";
import { startOrStop } from "./stop-signal";

const root = join(import.meta.dir, "..");
const archive = join(root, "dist/csi-attacher-image.tar");
const driverName = "node-ground.csi.test";

/** runOnNode brings the node up, runs the Deployment and a demo Pod on it, and takes it all down at a stop signal. */
export async function runOnNode(stop: Promise<StopSignal>): Promise<number> {
  const problem = nodeGroundProblem();
  if (problem !== undefined) {
    console.error(problem);
    return 1;
  }
  if (!existsSync(archive)) {
    console.log(`${archive} is missing: building it (bun run image, about a minute)`);
    await startOrStop(Promise.resolve($`bun run ${join(root, "scripts/image.ts")}`), stop);
  }
  const { cluster, node, namespace } = await startOrStop(bringUpNode(), stop);
  const kubectl = `kubectl --kubeconfig=${cluster.kubeconfigPath} -n ${namespace}`;
  console.log(
    [
      "",
      `node ${node.nodeName} up (kubelet, containerd, kube-scheduler, kube-controller-manager); state in ${cluster.dir}`,
      "  deploy/kubernetes/rbac.yaml and deployment.yaml applied (csi-driver: Kubernetes' mock driver), the image imported from dist/csi-attacher-image.tar",
      "  demo: Pod demo-pod with claim demo-claim (PersistentVolume demo-pv of the mock driver)",
      "watch it:",
      `  ${kubectl} get pods -o wide -w                      # two attacher replicas, then demo-pod Running`,
      `  ${kubectl} logs -f deployment/csi-attacher -c csi-attacher`,
      `  ${kubectl} get lease -o custom-columns=NAME:.metadata.name,HOLDER:.spec.holderIdentity`,
      `  ${kubectl} get volumeattachments`,
      "try:",
      `  ${kubectl} delete pod demo-pod                         # the volume detaches`,
      `  ${kubectl} delete pod <the Lease holder>                # the other replica takes over in seconds`,
      "Ctrl-C stops everything and removes the node's host paths.",
    ].join("\n"),
  );
  await stop;
  // The pods through the kubelet first, then the node; the apiserver before etcd; then what is left.
  await node.stop();
  await cluster.stop();
  await stopAllManaged();
  return 0;
}

/** bringUpNode starts the cluster and the node, applies the manifests and creates the demo Pod. */
async function bringUpNode(): Promise<{ cluster: TestCluster; node: NodeGround; namespace: string }> {
  const components = await ensureComponents();
  const cluster = await startTestCluster({ components, ...nodeClusterOptions });
  const admin = new AdminClient(cluster);
  const node = await startNodeGround({ cluster, components });
  node.containerd.importImage(archive);
  await applyObjects(admin, readRbacManifest());
  const deployment = mockDriverDeployment(driverName);
  await applyObjects(admin, [deployment]);
  const namespace = deployment.metadata?.namespace ?? "default";
  await startNodePlugin({ binary: components.mockCsiDriver, driverName, nodeName: node.nodeName, admin, logDir: join(cluster.dir, "node") });
  await admin.create(podPaths.csiDrivers, attachRequiredCsiDriver(driverName));
  await admin.create("/api/v1/persistentvolumes", persistentVolume("demo-pv", { driver: driverName, volumeHandle: "1" }));
  await admin.create(podPaths.claims(namespace), claimFor("demo-claim", "demo-pv"));
  await admin.create(podPaths.pods(namespace), claimingPod("demo-pod", nodeImages.pause, "demo-claim"));
  return { cluster, node, namespace };
}
