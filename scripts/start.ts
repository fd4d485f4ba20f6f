/**
 * start runs the attacher. With --kubeconfig (or inside a cluster) it runs
 * the compiled binary against that cluster with the flags given, exactly as
 * the sidecar would run. With no kubeconfig it first starts the local test
 * ground (kube-apiserver, etcd and Kubernetes' mock CSI driver, state kept in
 * .cluster/), creates a demo PV and VolumeAttachment, and runs the attacher
 * against it, so a newcomer sees a volume attach with one command.
 *
 *   bun run start                                   # local test ground
 *   bun run start --kubeconfig=$HOME/.kube/config --csi-address=/run/csi/socket -v=2
 */
import { $ } from "bun";
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { createIfAbsent, localDriverName, localNodeName, startLocalGround } from "../test/cluster/local-ground.ts";
import { spawnManaged, stopAllManaged } from "../test/cluster/managed-process.ts";

const root = resolve(import.meta.dir, "..");
const binary = join(root, "dist/csi-attacher");
const args = process.argv.slice(2);

await buildIfStale();
const againstCluster = args.some((arg) => /^--?kubeconfig(=|$)/.test(arg)) || process.env["KUBERNETES_SERVICE_HOST"] !== undefined;
process.exit(againstCluster ? await runAttacher(args) : await runOnLocalGround(args));

/** Rebuilds dist/csi-attacher when any source is newer than it. */
async function buildIfStale(): Promise<void> {
  const builtAt = existsSync(binary) ? statSync(binary).mtimeMs : 0;
  const sources = await Array.fromAsync(new Bun.Glob("{src,gen}/**/*.ts").scan({ cwd: root, absolute: true }));
  if (sources.some((source) => statSync(source).mtimeMs > builtAt)) await $`bun run ${join(root, "scripts/build.ts")}`;
}

/** Runs the binary in the foreground; signals reach it as they would in a pod. */
async function runAttacher(attacherArgs: readonly string[]): Promise<number> {
  const child = Bun.spawn([binary, ...attacherArgs], { stdio: ["inherit", "inherit", "inherit"] });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  return child.exited;
}

async function runOnLocalGround(attacherArgs: readonly string[]): Promise<number> {
  const { cluster, driver, admin } = await startLocalGround(join(root, ".cluster"));
  await createIfAbsent(admin, "/api/v1/persistentvolumes", {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name: "demo-pv" },
    spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], csi: { driver: localDriverName, volumeHandle: "1" } },
  });
  await createIfAbsent(admin, "/apis/storage.k8s.io/v1/volumeattachments", {
    apiVersion: "storage.k8s.io/v1",
    kind: "VolumeAttachment",
    metadata: { name: "demo-va" },
    spec: { attacher: localDriverName, nodeName: localNodeName, source: { persistentVolumeName: "demo-pv" } },
  });
  console.log(
    [
      `local test ground up in ${cluster.dir}`,
      `  kubeconfig: ${cluster.kubeconfigPath}`,
      `  driver:     ${driver.name} on ${driver.socket}`,
      `  demo:       VolumeAttachment demo-va for PersistentVolume demo-pv on ${localNodeName}`,
      `  watch it:   kubectl --kubeconfig=${cluster.kubeconfigPath} get volumeattachments -w`,
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
  // Show the attacher's log live, as if it ran in the foreground.
  const tail = Bun.spawn(["tail", "-F", "-n", "+1", attacher.stderrPath], { stdout: "inherit", stderr: "ignore" });
  const code = await attacher.exited;
  tail.kill();
  await stopAllManaged();
  await cluster.stop();
  return code;
}
