/**
 * `bun run cluster:up [--dir DIR] [--with-node]`: starts the test ground by hand (etcd,
 * kube-apiserver, the mock CSI driver and a CSINode for it) and keeps it up
 * until Ctrl-C, for running the attacher against it interactively. With
 * --with-node the ground is also a node (test/ground/node/).
 *
 * With --dir (e.g. `.cluster`, git-ignored) the data, certificate and token
 * survive restarts, so a kubeconfig path stays valid between sessions.
 */
import { mkdirSync } from "node:fs";
import { relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { errorMessage, stopAllManaged } from "./managed-process";
import { createIfAbsent } from "./admin-client";
import { localNodeName, startLocalGround } from "./local-ground";
import { launchFakeCsiDriver } from "./fake-csi-driver/launch";
import { containerdSocket, criNamespace } from "./node/containerd";
import { nodeClusterOptions, startNodeGround } from "./node/node-ground";
import { nodeGroundProblem } from "./node/node-prerequisites";

const fakeDriverName = "fake.csi.test";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      dir: { type: "string" },
      "with-node": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help === true) {
    console.log(
      [
        "usage: bun run test/ground/up.ts [--dir DIR] [--with-node]",
        "  --dir DIR     keep data, certs, token and logs in DIR (default: a temp dir, removed on exit)",
        "  --with-node   also make the ground a node: containerd, a kubelet, kube-scheduler and kube-controller-manager",
        "                (root; Debian's containerd, iptables, containernetworking-plugins; see test/ground/node/)",
      ].join("\n"),
    );
    return 0;
  }
  const dir = values.dir === undefined ? undefined : resolve(values.dir);
  if (dir !== undefined) mkdirSync(dir, { recursive: true });

  const withNode = values["with-node"] === true;
  const problem = withNode ? nodeGroundProblem() : undefined;
  if (problem !== undefined) {
    console.error(problem);
    return 1;
  }
  const { cluster, components, driver, admin } = await startLocalGround(dir, withNode ? nodeClusterOptions : {});
  const node = withNode ? await startNodeGround({ cluster, components }) : undefined;
  // The fault-injecting driver too, for trying errors and hangs by hand.
  const fake = await launchFakeCsiDriver({ directory: cluster.dir, config: { name: fakeDriverName } });
  await createIfAbsent(admin, "/apis/storage.k8s.io/v1/csinodes", {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSINode",
    metadata: { name: "node-fake" },
    spec: { drivers: [{ name: fakeDriverName, nodeID: "node-fake-id" }] },
  });

  const kubeconfig = relativeIfShorter(cluster.kubeconfigPath);
  const socket = relativeIfShorter(driver.socket);
  console.log(
    [
      "",
      `test cluster up (etcd ready in ${cluster.startupMs.etcd} ms, kube-apiserver in ${cluster.startupMs.apiserver} ms)`,
      `  dir:         ${cluster.dir}`,
      `  kubeconfig:  ${cluster.kubeconfigPath}`,
      `  server:      ${cluster.server}`,
      `  csi driver:  ${driver.name} on ${driver.socket}`,
      `  csi node:    ${localNodeName} (nodeID ${driver.nodeId})`,
      `  fake driver: ${fakeDriverName} on ${fake.csiSocket} (node-fake; script it through ${fake.controlSocket},`,
      `               see test/ground/fake-csi-driver/README.md)`,
      "",
      ...(node === undefined
        ? []
        : [
            `  node:        ${node.nodeName} (kubelet, containerd on ${containerdSocket}, kube-scheduler, kube-controller-manager);`,
            `               the image: ctr --address=${containerdSocket} -n ${criNamespace} images import dist/csi-attacher-image.tar`,
            "",
          ]),
      "run the attacher against it:",
      `  bun run start --kubeconfig=${kubeconfig} --csi-address=${socket} --v=2`,
      "",
      "inspect it:",
      `  kubectl --kubeconfig=${kubeconfig} get volumeattachments`,
      "",
      "Ctrl-C stops everything.",
    ].join("\n"),
  );

  // Ctrl-C is handled by managed-process (stop children, then exit); here we
  // only notice a component dying underneath the user.
  const died = await Promise.race([...cluster.processes, driver.process].map((child) => child.exited.then(() => child)));
  await fake[Symbol.asyncDispose]();
  await node?.stop();
  if (died.stopRequested) {
    // The signal handler is stopping everything and will exit for us.
    return new Promise<number>(() => {});
  }
  console.error(`${died.name} ${died.exitDescription ?? "exited"}; last lines of ${died.stderrPath}:\n${died.stderrTail()}`);
  await stopAllManaged();
  await cluster.stop();
  return 1;
}

function relativeIfShorter(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.length < path.length && !rel.startsWith("..") ? rel : path;
}

main().then(
  (code) => process.exit(code),
  async (e: unknown) => {
    console.error(`cluster:up failed: ${errorMessage(e)}`);
    await stopAllManaged();
    process.exit(1);
  },
);
