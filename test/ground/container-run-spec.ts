/**
 * What a kubelet would ask a container runtime for, to run the csi-attacher
 * container of deploy/kubernetes/deployment.yaml on the test ground: its
 * argv and environment (`$(VAR)` and downward-API references resolved), user,
 * security settings, mounts and memory limit, all read from the manifest
 * and the image's config.
 *
 * Only what must differ on the test ground is substituted, and each
 * substitution is said where it is made:
 * - emptyDir volumes are host directories the test made (the driver's socket sits in one);
 * - the service account volume holds a token the test requested for rbac.yaml's account;
 * - the container shares the host's network (kube-apiserver listens on the host's
 *   loopback), so each containerPort is moved to a free host port.
 *
 * A manifest that would not run as written (an unknown flag, an env var the
 * args use but nobody sets, a socket on no shared volume, a probe on a port
 * nothing listens on, root despite runAsNonRoot) throws a ManifestError
 * naming the field, before anything starts.
 */
import { parseConfig, type Config } from "../../src/cli/config";
import { FlagError } from "../../src/cli/errors";
import { quantityKind } from "../../src/cli/flag-kinds";
import { attacherContainer, attacherContainerName, deploymentNamespace, type ContainerSpec, type Deployment, type EnvVar, type Probe } from "./deployment-manifest";
import { expandKubeletReferences } from "./driver-chart-args";
import { ManifestError } from "./errors";

/** Where the kubelet mounts the pod's service account token, CA and namespace. */
export const serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Kubernetes' default terminationGracePeriodSeconds. */
const defaultGracePeriodSeconds = 30;

/**
 * The capabilities containerd (and so the kubelet through CRI) gives a
 * container that drops nothing: what `capabilities.drop` removes from.
 */
export const runtimeDefaultCapabilities: readonly string[] = [
  "CAP_CHOWN",
  "CAP_DAC_OVERRIDE",
  "CAP_FSETID",
  "CAP_FOWNER",
  "CAP_MKNOD",
  "CAP_NET_RAW",
  "CAP_SETGID",
  "CAP_SETUID",
  "CAP_SETFCAP",
  "CAP_SETPCAP",
  "CAP_NET_BIND_SERVICE",
  "CAP_SYS_CHROOT",
  "CAP_KILL",
  "CAP_AUDIT_WRITE",
];

/** TestGround is what the test made for the pod to run on. */
export interface TestGround {
  /** The host directory standing in for each emptyDir volume, by volume name. */
  readonly emptyDirs: Readonly<Record<string, string>>;
  /** A host directory holding `token`, `ca.crt` and `namespace`, as the kubelet projects them. */
  readonly serviceAccountDir: string;
  /** kube-apiserver, as KUBERNETES_SERVICE_HOST/PORT tell a pod where it is. */
  readonly apiServer: { readonly host: string; readonly port: string };
  /** The host port standing in for each containerPort (see the module comment). */
  readonly hostPorts: Readonly<Record<number, number>>;
  readonly podName: string;
  readonly nodeName: string;
  readonly podIP: string;
}

/** ImageConfig is the part of the image's OCI config (`skopeo inspect --config`'s `.config`) a runtime reads. */
export interface ImageConfig {
  readonly Entrypoint?: readonly string[] | null;
  readonly Cmd?: readonly string[] | null;
  readonly Env?: readonly string[] | null;
  readonly User?: string;
  readonly WorkingDir?: string;
}

/** One bind mount into the container. */
export interface BindMount {
  readonly destination: string;
  readonly source: string;
  readonly readOnly: boolean;
}

/** An httpGet probe, aimed at the host port that stands in for its container port. */
export interface HttpProbe {
  readonly path: string;
  readonly hostPort: number;
}

/** ContainerRunSpec is the csi-attacher container as the runtime would run it. */
export interface ContainerRunSpec {
  readonly argv: readonly string[];
  /** `NAME=value`, the image's variables first, the container's overriding them. */
  readonly env: readonly string[];
  readonly cwd: string;
  readonly user: { readonly uid: number; readonly gid: number };
  readonly readOnlyRoot: boolean;
  readonly noNewPrivileges: boolean;
  /** The capability set (bounding, effective, permitted alike). */
  readonly capabilities: readonly string[];
  readonly mounts: readonly BindMount[];
  /** resources.limits.memory in bytes; undefined without a limit. */
  readonly memoryLimitBytes: number | undefined;
  /** terminationGracePeriodSeconds, in ms: how long SIGTERM has before SIGKILL. */
  readonly gracePeriodMs: number;
  /** Where on the host the driver must serve, so that the attacher finds it at its --csi-address. */
  readonly csiSocketHostPath: string;
  /** The attacher's own reading of its args. */
  readonly config: Config;
  readonly readinessProbe: HttpProbe | undefined;
  readonly livenessProbe: HttpProbe | undefined;
}

/** Options of {@link translateAttacherContainer}. */
export interface TranslateOptions {
  /** Args replacing the manifest's (a test's `--version`); the manifest's are still checked. */
  readonly argsOverride?: readonly string[];
}

const containerField = (name: string, field: string) => `spec.template.spec.containers[${name}].${field}`;

/** downwardApiValue is what a fieldRef resolves to in the test's pod. */
function downwardApiValue(deployment: Deployment, ground: TestGround, fieldPath: string, field: string): string {
  switch (fieldPath) {
    case "metadata.namespace":
      return deploymentNamespace(deployment);
    case "metadata.name":
      return ground.podName;
    case "spec.nodeName":
      return ground.nodeName;
    case "spec.serviceAccountName":
      return deployment.spec.template.spec.serviceAccountName ?? "default";
    case "status.podIP":
    case "status.hostIP":
      return ground.podIP;
    default:
      throw new ManifestError(field, `fieldRef ${fieldPath} is not one the test ground resolves (metadata.namespace, metadata.name, spec.nodeName, spec.serviceAccountName, status.podIP, status.hostIP)`);
  }
}

/** containerEnv resolves a container's env in order, as the kubelet does: a value may use the variables defined above it. */
function containerEnv(deployment: Deployment, container: ContainerSpec, ground: TestGround): Map<string, string> {
  const env = new Map<string, string>();
  (container.env ?? []).forEach((variable: EnvVar, index) => {
    const field = containerField(container.name, `env[${index}] (${variable.name})`);
    const { valueFrom } = variable;
    if (valueFrom !== undefined) {
      const fieldRef = valueFrom.fieldRef;
      if (fieldRef === undefined) throw new ManifestError(field, `valueFrom ${Object.keys(valueFrom).join(", ")} is not one the test ground resolves (only fieldRef)`);
      env.set(variable.name, downwardApiValue(deployment, ground, fieldRef.fieldPath, field));
    } else {
      env.set(variable.name, expandKubeletReferences(variable.value ?? "", Object.fromEntries(env)));
    }
  });
  return env;
}

/** expandAll expands `$(VAR)` in each item and refuses a reference to a variable the env lacks. */
function expandAll(items: readonly string[], env: ReadonlyMap<string, string>, field: string): string[] {
  const values = Object.fromEntries(env);
  return items.map((item, index) => {
    for (const [, name] of item.replace(/\$\$/g, "").matchAll(/\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g)) {
      if (name !== undefined && !env.has(name)) {
        throw new ManifestError(`${field}[${index}]`, `${JSON.stringify(item)} uses $(${name}), but the container's env sets no ${name}: the attacher would get the text literally`);
      }
    }
    return expandKubeletReferences(item, values);
  });
}

/** listenPort is the port of a `host:port` listen address. */
function listenPort(address: string): number | undefined {
  const match = /:(\d+)$/.exec(address);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/**
 * moveListenPorts points --http-endpoint / --metrics-address at the host
 * port standing in for their container port: on the shared host network,
 * the manifest's port may be another test's.
 */
function moveListenPorts(argv: readonly string[], hostPorts: Readonly<Record<number, number>>): string[] {
  const moved = [...argv];
  moved.forEach((arg, index) => {
    const flag = /^(--?(?:http-endpoint|metrics-address))(?:=(.*))?$/.exec(arg);
    if (flag === null) return;
    const valueIndex = flag[2] === undefined ? index + 1 : index;
    const value = flag[2] ?? moved[valueIndex];
    const port = value === undefined ? undefined : listenPort(value);
    const hostPort = port === undefined ? undefined : hostPorts[port];
    if (value === undefined || hostPort === undefined) return;
    const replaced = value.replace(/:\d+$/, `:${hostPort}`);
    moved[valueIndex] = flag[2] === undefined ? replaced : `${flag[1]}=${replaced}`;
  });
  return moved;
}

/** parseUser reads an image's `uid[:gid]` (numeric only: the test ground cannot read the image's passwd for a name). */
function parseUser(user: string | undefined): { uid?: number; gid?: number } {
  if (user === undefined || user === "") return {};
  const match = /^(\d+)(?::(\d+))?$/.exec(user);
  if (match === null) throw new ManifestError("image config User", `${JSON.stringify(user)} is not numeric uid[:gid]`);
  return { uid: Number(match[1]), ...(match[2] === undefined ? {} : { gid: Number(match[2]) }) };
}

function capabilities(container: ContainerSpec): string[] {
  const sc = container.securityContext?.capabilities;
  const name = (cap: string) => (cap.startsWith("CAP_") ? cap : `CAP_${cap}`);
  const drop = new Set((sc?.drop ?? []).map(name));
  const kept = drop.has("CAP_ALL") ? [] : runtimeDefaultCapabilities.filter((cap) => !drop.has(cap));
  return [...new Set([...kept, ...(sc?.add ?? []).map(name)])];
}

function mounts(deployment: Deployment, container: ContainerSpec, ground: TestGround): BindMount[] {
  const pod = deployment.spec.template.spec;
  const result = (container.volumeMounts ?? []).map((mount, index): BindMount => {
    const field = containerField(container.name, `volumeMounts[${index}] (${mount.name})`);
    const volume = (pod.volumes ?? []).find((candidate) => candidate.name === mount.name);
    if (volume === undefined) throw new ManifestError(field, `mounts volume ${mount.name}, which spec.template.spec.volumes does not define`);
    if (mount.subPath !== undefined) throw new ManifestError(field, "subPath is not supported by the test ground");
    if (volume.emptyDir === undefined) throw new ManifestError(field, `volume ${mount.name} is not an emptyDir, the only kind the test ground provides`);
    const source = ground.emptyDirs[mount.name];
    if (source === undefined) throw new ManifestError(field, `the test made no directory for emptyDir ${mount.name}`);
    return { destination: mount.mountPath.replace(/(.)\/+$/, "$1"), source, readOnly: mount.readOnly === true };
  });
  if (pod.automountServiceAccountToken !== false) result.push({ destination: serviceAccountMountPath, source: ground.serviceAccountDir, readOnly: true });
  return result;
}

/** volumePath is the volume and the path inside it where a container sees `path`, if it is on a volume. */
function volumePath(container: ContainerSpec, path: string): { volume: string; relative: string } | undefined {
  for (const mount of container.volumeMounts ?? []) {
    const dir = mount.mountPath.replace(/\/+$/, "");
    if (path.startsWith(`${dir}/`)) return { volume: mount.name, relative: path.slice(dir.length + 1) };
  }
  return undefined;
}

/**
 * checkDriverServesThere compares the attacher's socket with the endpoint of
 * each other container on the same volume that names one (`--endpoint=`,
 * `--csi-endpoint=`, `--csi-address=`): a pod whose driver serves elsewhere
 * never attaches anything.
 */
function checkDriverServesThere(deployment: Deployment, socket: { volume: string; relative: string }, field: string): void {
  for (const sibling of deployment.spec.template.spec.containers) {
    if (sibling.name === attacherContainerName) continue;
    const env = Object.fromEntries((sibling.env ?? []).filter((variable) => variable.value !== undefined).map((variable) => [variable.name, variable.value ?? ""]));
    for (const arg of sibling.args ?? []) {
      const endpoint = /^--?(?:endpoint|csi-endpoint|csi-address)=(.+)$/.exec(expandKubeletReferences(arg, env))?.[1]?.replace(/^unix:\/\//, "");
      if (endpoint === undefined) continue;
      const served = volumePath(sibling, endpoint);
      if (served?.volume !== socket.volume) continue;
      if (served.relative !== socket.relative) {
        throw new ManifestError(field, `dials ${socket.relative} on volume ${socket.volume}, but container ${sibling.name} serves ${served.relative} there (${arg})`);
      }
    }
  }
}

function httpProbe(container: ContainerSpec, probe: Probe | undefined, listening: number | undefined, ground: TestGround, field: string): HttpProbe | undefined {
  const get = probe?.httpGet;
  if (get === undefined) return undefined;
  const port = typeof get.port === "number" ? get.port : container.ports?.find((candidate) => candidate.name === get.port)?.containerPort;
  if (port === undefined) throw new ManifestError(field, `httpGet port ${JSON.stringify(get.port)} names no port of the container`);
  if (port !== listening) throw new ManifestError(field, `httpGet port ${port} is not where the attacher listens (--http-endpoint port ${listening ?? "none"})`);
  const hostPort = ground.hostPorts[port];
  if (hostPort === undefined) throw new ManifestError(field, `the test gave no host port for container port ${port}`);
  return { path: get.path ?? "/", hostPort };
}

/**
 * translateAttacherContainer reads the csi-attacher container of
 * `deployment` into what a runtime runs, on `image`, on the test ground.
 */
export function translateAttacherContainer(deployment: Deployment, image: ImageConfig, ground: TestGround, options: TranslateOptions = {}): ContainerRunSpec {
  const pod = deployment.spec.template.spec;
  const container = attacherContainer(deployment);
  const field = (name: string) => containerField(container.name, name);

  const env = containerEnv(deployment, container, ground);
  const command = container.command === undefined ? [...(image.Entrypoint ?? [])] : expandAll(container.command, env, field("command"));
  const args = container.args === undefined ? (container.command === undefined ? [...(image.Cmd ?? [])] : []) : expandAll(container.args, env, field("args"));
  if (command.length === 0) throw new ManifestError(field("command"), "neither the container nor the image names a program to run");

  let config: Config;
  try {
    config = parseConfig(args);
  } catch (e: unknown) {
    if (!(e instanceof FlagError)) throw e;
    throw new ManifestError(field("args"), `the attacher refuses them: ${e.message}`, { cause: e });
  }

  const containerMounts = mounts(deployment, container, ground);
  const socket = volumePath(container, config.csiAddress);
  if (socket === undefined) {
    throw new ManifestError(field("args"), `--csi-address ${config.csiAddress} is on no volume of the container: a driver in another container could not put its socket there`);
  }
  checkDriverServesThere(deployment, socket, field("args"));
  // mounts() keeps the order of volumeMounts, so the socket's volume is at the same index.
  const socketSource = containerMounts[(container.volumeMounts ?? []).findIndex((mount) => mount.name === socket.volume)];
  if (socketSource === undefined) throw new ManifestError(field("volumeMounts"), `no mount for volume ${socket.volume}`);

  const imageUser = parseUser(image.User);
  const uid = container.securityContext?.runAsUser ?? pod.securityContext?.runAsUser ?? imageUser.uid ?? 0;
  const gid = container.securityContext?.runAsGroup ?? pod.securityContext?.runAsGroup ?? imageUser.gid ?? 0;
  const runAsNonRoot = container.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot ?? false;
  if (runAsNonRoot && uid === 0) throw new ManifestError(field("securityContext.runAsNonRoot"), "is true, but the container would run as uid 0; the kubelet refuses to start it");
  if (container.securityContext?.privileged === true) throw new ManifestError(field("securityContext.privileged"), "a privileged attacher is never needed");

  let memoryLimitBytes: number | undefined;
  const memory = container.resources?.limits?.["memory"];
  if (memory !== undefined) {
    const read = quantityKind.read(String(memory), undefined);
    if (!read.ok) throw new ManifestError(field("resources.limits.memory"), `${JSON.stringify(memory)}: ${read.reason}`);
    memoryLimitBytes = read.value;
  }

  const listening = config.httpEndpoint === "" ? undefined : listenPort(config.httpEndpoint);
  const imageEnv = new Map((image.Env ?? []).map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)] as const));
  // The kubelet's service links: how an in-cluster client finds kube-apiserver.
  const serviceEnv = new Map([
    ["KUBERNETES_SERVICE_HOST", ground.apiServer.host],
    ["KUBERNETES_SERVICE_PORT", ground.apiServer.port],
  ]);
  const allEnv = new Map([...imageEnv, ...serviceEnv, ...env]);

  return {
    argv: [...command, ...moveListenPorts(options.argsOverride ?? args, ground.hostPorts)],
    env: [...allEnv].map(([name, value]) => `${name}=${value}`),
    cwd: image.WorkingDir || "/",
    user: { uid, gid },
    readOnlyRoot: container.securityContext?.readOnlyRootFilesystem === true,
    // Kubernetes' default for allowPrivilegeEscalation is true: only an explicit false sets no_new_privs.
    noNewPrivileges: container.securityContext?.allowPrivilegeEscalation === false,
    capabilities: capabilities(container),
    mounts: containerMounts,
    memoryLimitBytes,
    gracePeriodMs: (pod.terminationGracePeriodSeconds ?? defaultGracePeriodSeconds) * 1000,
    csiSocketHostPath: `${socketSource.source}/${socket.relative}`,
    config,
    readinessProbe: httpProbe(container, container.readinessProbe, listening, ground, field("readinessProbe")),
    livenessProbe: httpProbe(container, container.livenessProbe, listening, ground, field("livenessProbe")),
  };
}
