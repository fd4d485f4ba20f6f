/**
 * The OCI runtime config (config.json) that runs the csi-attacher container
 * under runc: umoci's config for the image (what `umoci unpack` writes from
 * the image config: program, user, environment, the runtime's default mounts
 * and masked paths) with everything the Deployment sets laid over it.
 */
import * as v from "valibot";
import type { ContainerRunSpec } from "../../ground/container-run-spec";

const mountSchema = v.looseObject({ destination: v.string(), type: v.optional(v.string()), source: v.optional(v.string()), options: v.optional(v.array(v.string())) });
const runtimeConfigSchema = v.looseObject({
  ociVersion: v.string(),
  process: v.looseObject({ args: v.array(v.string()) }),
  root: v.looseObject({ path: v.string() }),
  mounts: v.array(mountSchema),
  linux: v.looseObject({
    namespaces: v.array(v.looseObject({ type: v.string() })),
    resources: v.optional(v.looseObject({})),
  }),
});

/** RuntimeConfig is an OCI runtime config, checked for the fields this module rewrites. */
export type RuntimeConfig = v.InferOutput<typeof runtimeConfigSchema>;
type Mount = v.InferOutput<typeof mountSchema>;

/** parseRuntimeConfig reads a config.json (umoci's). */
export function parseRuntimeConfig(json: unknown): RuntimeConfig {
  return v.parse(runtimeConfigSchema, json);
}

/** Options of {@link runtimeConfig}. */
export interface RuntimeConfigOptions {
  /** umoci's config.json for the image. */
  readonly base: RuntimeConfig;
  readonly run: ContainerRunSpec;
  /** The unpacked image's root, absolute (several bundles may share it: it is read-only to them). */
  readonly rootfs: string;
  /** The pod's hostname (its name), which leader election takes as its identity. */
  readonly hostname: string;
  /** The container's cgroup, below the cgroup root of each controller. */
  readonly cgroupsPath: string;
}

/**
 * runtimeConfig lays the Deployment's container over the image's config.
 * Two deviations from a kubelet's pod, both because of this sandbox or the
 * test ground, not the manifest:
 * - no network namespace: the container shares the host's network, where
 *   kube-apiserver listens on loopback (container-run-spec moved the ports);
 * - no `process.rlimits`: setting them needs CAP_SYS_RESOURCE, which this
 *   sandbox lacks, and runc fails the start on it.
 */
export function runtimeConfig(options: RuntimeConfigOptions): RuntimeConfig {
  const { base, run } = options;
  const { rlimits: _rlimits, ...process } = base.process;
  const binds: Mount[] = run.mounts.map((mount) => ({
    destination: mount.destination,
    type: "bind",
    source: mount.source,
    options: ["rbind", "nosuid", "nodev", mount.readOnly ? "ro" : "rw"],
  }));
  return {
    ...base,
    process: {
      ...process,
      // A pod's container has no TTY unless it asks for one.
      terminal: false,
      args: [...run.argv],
      env: [...run.env],
      cwd: run.cwd,
      user: { uid: run.user.uid, gid: run.user.gid },
      capabilities: { bounding: [...run.capabilities], effective: [...run.capabilities], permitted: [...run.capabilities], inheritable: [], ambient: [] },
      noNewPrivileges: run.noNewPrivileges,
    },
    root: { path: options.rootfs, readonly: run.readOnlyRoot },
    hostname: options.hostname,
    mounts: [...base.mounts, ...binds],
    linux: {
      ...base.linux,
      namespaces: base.linux.namespaces.filter((namespace) => namespace.type !== "network"),
      resources: { ...base.linux.resources, ...(run.memoryLimitBytes === undefined ? {} : { memory: { limit: run.memoryLimitBytes } }) },
      cgroupsPath: options.cgroupsPath,
    },
  };
}
