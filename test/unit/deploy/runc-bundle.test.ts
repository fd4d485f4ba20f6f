import { describe, expect, it } from "bun:test";
import { parseConfig } from "../../../src/cli/config";
import type { ContainerRunSpec } from "../../ground/container-run-spec";
import { parseRuntimeConfig, runtimeConfig } from "../../e2e/support/runc-bundle";

/** The parts of umoci's config.json for the image that the translation touches or must keep. */
const umociConfig = parseRuntimeConfig({
  ociVersion: "1.0.0",
  process: {
    terminal: true,
    user: { uid: 65532, gid: 65532 },
    args: ["/csi-attacher"],
    env: ["PATH=/usr/bin", "TERM=xterm"],
    cwd: "/",
    capabilities: { bounding: ["CAP_KILL"], effective: ["CAP_KILL"], inheritable: ["CAP_KILL"], permitted: ["CAP_KILL"], ambient: ["CAP_KILL"] },
    rlimits: [{ type: "RLIMIT_NOFILE", hard: 1024, soft: 1024 }],
    noNewPrivileges: true,
  },
  root: { path: "rootfs" },
  hostname: "umoci-default",
  mounts: [{ destination: "/proc", type: "proc", source: "proc" }],
  linux: {
    namespaces: [{ type: "pid" }, { type: "network" }, { type: "ipc" }, { type: "uts" }, { type: "mount" }],
    resources: { devices: [{ allow: false, access: "rwm" }] },
    maskedPaths: ["/proc/kcore"],
  },
});

const run: ContainerRunSpec = {
  argv: ["/csi-attacher", "--v=2"],
  env: ["ADDRESS=/csi/csi.sock"],
  cwd: "/",
  user: { uid: 65532, gid: 65532 },
  readOnlyRoot: true,
  noNewPrivileges: false,
  capabilities: [],
  mounts: [{ destination: "/csi", source: "/tmp/socket-dir", readOnly: false }],
  memoryLimitBytes: 256 * 1024 * 1024,
  gracePeriodMs: 30_000,
  csiSocketHostPath: "/tmp/socket-dir/csi.sock",
  config: parseConfig(["--v=2", "--csi-address=/csi/csi.sock"]),
  readinessProbe: undefined,
  livenessProbe: undefined,
};

describe("runc bundle config", () => {
  it("lays the container over umoci's config: no rlimits, no network namespace, the limit, the binds, no TTY", () => {
    const config = runtimeConfig({ base: umociConfig, run, rootfs: "/tmp/rootfs", hostname: "csi-attacher-0", cgroupsPath: "/e2e-1" });
    expect(config).toEqual({
      ociVersion: "1.0.0",
      process: {
        terminal: false,
        user: { uid: 65532, gid: 65532 },
        args: ["/csi-attacher", "--v=2"],
        env: ["ADDRESS=/csi/csi.sock"],
        cwd: "/",
        capabilities: { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] },
        noNewPrivileges: false,
      },
      root: { path: "/tmp/rootfs", readonly: true },
      hostname: "csi-attacher-0",
      mounts: [
        { destination: "/proc", type: "proc", source: "proc" },
        { destination: "/csi", type: "bind", source: "/tmp/socket-dir", options: ["rbind", "nosuid", "nodev", "rw"] },
      ],
      linux: {
        namespaces: [{ type: "pid" }, { type: "ipc" }, { type: "uts" }, { type: "mount" }],
        resources: { devices: [{ allow: false, access: "rwm" }], memory: { limit: 268435456 } },
        maskedPaths: ["/proc/kcore"],
        cgroupsPath: "/e2e-1",
      },
    });
  });
});
