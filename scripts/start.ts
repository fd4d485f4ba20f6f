/**
 * start runs the attacher. With --kubeconfig (or inside a cluster) it runs
 * the compiled binary against that cluster with the flags given, exactly as
 * the sidecar would run. With no kubeconfig it first starts the local test
 * ground (kube-apiserver, etcd and Kubernetes' mock CSI driver, state kept in
 * .cluster/ or --ground-dir), creates a demo PV and VolumeAttachment, and runs the attacher
 * against it, so a newcomer sees a volume attach with one command. With
 * --with-controller-manager, kube-controller-manager's attach/detach and PV
 * binder controllers run too, and a demo Pod's volume is attached the way a
 * cluster does it: the controller creates the VolumeAttachment, the attacher
 * attaches it, the controller lists it in the Node's status. With
 * --with-node the ground becomes a node and runs deploy/kubernetes as
 * operators apply it (scripts/start-on-node.ts). Ctrl-C stops the attacher
 * as a pod's SIGTERM would, then the ground, and exits 0.
 *
 *   bun run start                                   # local test ground
 *   bun run start --with-controller-manager         # ... driven by the attach/detach controller
 *   bun run start --with-node                       # deployment.yaml on a kubelet and containerd (root)
 *   bun run start --kubeconfig=$HOME/.kube/config --csi-address=/run/csi/socket -v=2
 */
import { $ } from "bun";
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { createIfAbsent } from "../test/ground/admin-client";
import { localDriverName, localNodeName, startLocalGround, type LocalGround } from "../test/ground/local-ground";
import { spawnManaged, stopAllManaged, type StopSignal } from "../test/ground/managed-process";
import { paths, persistentVolume, volumeAttachment } from "../test/ground/objects";
import { attachRequiredCsiDriver, claimFor, controllerManagedNode, podOnNode, podPaths } from "../test/ground/pod-objects";
import { runOnNode } from "./start-on-node";
import { startOrStop, stopSignal } from "./stop-signal";

const root = resolve(import.meta.dir, "..");
const binary = join(root, "dist/csi-attacher");
const controllerManagerFlag = "--with-controller-manager";
const withControllerManager = process.argv.includes(controllerManagerFlag);
const nodeFlag = "--with-node";
const withNode = process.argv.includes(nodeFlag);
const groundDirFlag = "--ground-dir=";
const groundDir = resolve(process.argv.find((arg) => arg.startsWith(groundDirFlag))?.slice(groundDirFlag.length) ?? join(root, ".cluster"));
const args = process.argv.slice(2).filter((arg) => arg !== controllerManagerFlag && arg !== nodeFlag && !arg.startsWith(groundDirFlag));
/** Longer than the attacher's own drain deadline at the default --timeout (15 s plus 5 s), so the attacher, not this script, decides when it is done. */
const attacherStopGraceMs = 30_000;

await buildIfStale();
const againstCluster = args.some((arg) => /^--?kubeconfig(=|$)/.test(arg)) || process.env["KUBERNETES_SERVICE_HOST"] !== undefined;
if (againstCluster && withControllerManager) {
  console.error(`${controllerManagerFlag} starts a controller manager on the local test ground; a real cluster has its own`);
  process.exit(2);
}
if (againstCluster && withNode) {
  console.error(`${nodeFlag} makes the local test ground a node; a real cluster has its own`);
  process.exit(2);
}
process.exit(againstCluster ? await runAttacher(args) : withNode ? await runOnNode(stopSignal()) : await runOnLocalGround(args, stopSignal()));

/** Rebuilds dist/csi-attacher when any source is newer than it. */
async function buildIfStale(): Promise<void> {
  const builtAt = existsSync(binary) ? statSync(binary).mtimeMs : 0;
  const sources = await Array.fromAsync(new Bun.Glob("{src,gen}/**/*.ts").scan({ cwd: root, absolute: true }));
  if (sources.some((source) => statSync(source).mtimeMs > builtAt)) await $`bun run ${join(root, "scripts/build.ts")}`;
}

/**
 * Runs the binary with its output on the terminal, and passes it the first
 * stop signal this script gets, as a pod's would be. It runs in a session of
 * its own and later signals are not passed on: one Ctrl-C can reach this
 * script twice (from the terminal and passed on by `bun run`), and to the
 * binary a second signal means "exit now, without draining".
 */
async function runAttacher(attacherArgs: readonly string[]): Promise<number> {
  const child = Bun.spawn([binary, ...attacherArgs], { stdio: ["ignore", "inherit", "inherit"], detached: true });
  let passedOn = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (passedOn) return;
      passedOn = true;
      child.kill(signal);
    });
  }
  return child.exited;
}

/**
 * runOnLocalGround starts the ground and the demo, runs the attacher until
 * it exits or a stop signal comes, and then takes the ground down: the
 * attacher's exit code, which a stop makes 0 once it has drained.
 */
async function runOnLocalGround(attacherArgs: readonly string[], stop: Promise<StopSignal>): Promise<number> {
  const ground = await startOrStop(startLocalGround(groundDir), stop);
  const demo = await startOrStop(withControllerManager ? startPodDemo(ground) : createVolumeAttachmentDemo(ground), stop);
  const { cluster, driver } = ground;
  console.log(
    [
      `local test ground up in ${cluster.dir}`,
      `  kubeconfig: ${cluster.kubeconfigPath}`,
      `  driver:     ${driver.name} on ${driver.socket}`,
      ...demo,
      "  try one by hand (in another terminal):",
      `    kubectl --kubeconfig=${cluster.kubeconfigPath} apply -f ${join(root, "deploy/examples/persistent-volume.yaml")} -f ${join(root, "deploy/examples/volume-attachment.yaml")}`,
      `    kubectl --kubeconfig=${cluster.kubeconfigPath} get volumeattachment example-va -o jsonpath='{.status}'`,
      `    kubectl --kubeconfig=${cluster.kubeconfigPath} delete volumeattachment example-va   # detaches it`,
      `  ask the doctor: ${binary} doctor --kubeconfig=${cluster.kubeconfigPath} --csi-address=${driver.socket}`,
      "starting the attacher (Ctrl-C stops everything)...",
    ].join("\n"),
  );
  const attacher = spawnManaged({
    name: "attacher",
    command: [binary, `--kubeconfig=${cluster.kubeconfigPath}`, `--csi-address=${driver.socket}`, "-v=2", ...attacherArgs],
    logDir: cluster.dir,
  });
  // Show the attacher's log live, as if it ran in the foreground, to its
  // last line: tail ends once the attacher has, and in a session of its own
  // it outlives the Ctrl-C that asks the attacher to stop.
  const tail = Bun.spawn(["tail", "-F", "-n", "+1", `--pid=${attacher.pid}`, attacher.stderrPath], { stdout: "inherit", stderr: "ignore", detached: true });
  void stop.then(() => attacher.stop(attacherStopGraceMs));
  const code = await attacher.exited;
  await tail.exited;
  // The controller manager and the apiserver before etcd, so none logs its server going away; then the driver.
  await cluster.stop();
  await stopAllManaged();
  return code;
}

/** createVolumeAttachmentDemo creates a PV and a VA for it by hand, as the attach/detach controller would; returns the banner's lines about it. */
async function createVolumeAttachmentDemo({ admin, cluster }: LocalGround): Promise<string[]> {
  await createIfAbsent(admin, paths.persistentVolumes, persistentVolume("demo-pv", { driver: localDriverName, volumeHandle: "1" }));
  await createIfAbsent(admin, paths.volumeAttachments, volumeAttachment("demo-va", localDriverName, localNodeName, "demo-pv"));
  return [
    `  demo:       VolumeAttachment demo-va for PersistentVolume demo-pv on ${localNodeName}`,
    `  watch it:   kubectl --kubeconfig=${cluster.kubeconfigPath} get volumeattachments -w`,
  ];
}

/**
 * startPodDemo starts kube-controller-manager on the ground and gives it a
 * Pod on node-1 with a claim bound to one of the mock driver's volumes; the
 * controller creates the VolumeAttachment once the attacher runs. The Node
 * goes first: the controller overlooks a Pod whose Node it has not seen.
 */
async function startPodDemo({ admin, cluster }: LocalGround): Promise<string[]> {
  await createIfAbsent(admin, podPaths.nodes, controllerManagedNode(localNodeName));
  await createIfAbsent(admin, podPaths.csiDrivers, attachRequiredCsiDriver(localDriverName));
  await cluster.startControllerManager();
  // The mock driver starts with volumes "1" to "3"; demo-pv uses "1".
  await createIfAbsent(admin, paths.persistentVolumes, persistentVolume("demo-pod-pv", { driver: localDriverName, volumeHandle: "2" }));
  await createIfAbsent(admin, podPaths.claims("default"), claimFor("demo-claim", "demo-pod-pv"));
  await createIfAbsent(admin, podPaths.pods("default"), podOnNode("demo-pod", localNodeName, ["demo-claim"]));
  const kubectl = `kubectl --kubeconfig=${cluster.kubeconfigPath}`;
  return [
    `  controller: kube-controller-manager (attach/detach, PV binder); its log: ${join(cluster.dir, "logs", "kube-controller-manager.stderr.log")}`,
    `  demo:       Pod demo-pod on ${localNodeName} with claim demo-claim (PersistentVolume demo-pod-pv)`,
    `  watch it:   ${kubectl} get volumeattachments -w`,
    `              ${kubectl} get node ${localNodeName} -o jsonpath='{.status.volumesAttached}'`,
    `  detach it:  ${kubectl} delete pod demo-pod --grace-period=0 --force`,
  ];
}
