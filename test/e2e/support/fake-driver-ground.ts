import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DriverConfigPatch } from "../../drivers/fake-csi-driver/config";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../../drivers/fake-csi-driver/launch";
import { AdminApiError, type AdminClient } from "../../cluster/admin-client";
import type { TestCluster } from "../../cluster/test-cluster";
import { startAttacher, type AttacherOptions, type AttacherProcess } from "./attacher-process";
import { csiNode, paths } from "./objects";

export interface FakeDriverSetup {
  readonly driver: FakeCsiDriver;
  readonly attacher: AttacherProcess;
  readonly driverName: string;
  /** The sanitized finalizer this driver's attacher uses. */
  readonly finalizer: string;
  readonly dir: string;
}

export interface FakeDriverSetupOptions {
  /** Driver name; each test uses its own so that attachers sharing a cluster ignore each other's VAs. */
  readonly driverName: string;
  readonly config?: DriverConfigPatch;
  /** Nodes to register a CSINode for, each with node ID `<node>-id`. */
  readonly nodes?: readonly string[];
  /** Flags for the attacher besides --kubeconfig and --csi-address. */
  readonly attacherArgs?: readonly string[];
  /** Which binary runs, and how: another CPU's binary under QEMU, with longer to start; under its own hostname, as a leader-election replica. Default dist/csi-attacher on this host. */
  readonly attacherCommand?: Pick<AttacherOptions, "binary" | "wrapper" | "syncTimeoutMs" | "hostname">;
}

/**
 * startFakeDriverSetup launches a fault-injecting driver under its own name,
 * registers it on CSINodes, and starts the compiled attacher against it.
 */
export async function startFakeDriverSetup(cluster: TestCluster, admin: AdminClient, options: FakeDriverSetupOptions): Promise<FakeDriverSetup> {
  const dir = mkdtempSync(join(tmpdir(), `e2e-${options.driverName}-`));
  const driver = await launchFakeCsiDriver({ directory: dir, config: { name: options.driverName, ...options.config } });
  for (const node of options.nodes ?? []) {
    await upsertCsiNodeDriver(admin, node, options.driverName, `${node}-id`);
  }
  const attacher = await startAttacher({
    kubeconfig: cluster.kubeconfigPath,
    csiAddress: driver.csiSocket,
    logDir: dir,
    args: options.attacherArgs ?? [],
    name: `attacher-${options.driverName}`,
    ...options.attacherCommand,
  });
  return { driver, attacher, driverName: options.driverName, finalizer: `external-attacher/${options.driverName.replace(/[^a-zA-Z0-9-]/g, "-")}`, dir };
}

/** stopFakeDriverSetup stops the attacher, then the driver. */
export async function stopFakeDriverSetup(setup: FakeDriverSetup | undefined): Promise<void> {
  await setup?.attacher[Symbol.asyncDispose]();
  await setup?.driver[Symbol.asyncDispose]();
}

/** Adds (or creates the CSINode with) one driver entry; several tests' drivers share nodes. */
async function upsertCsiNodeDriver(admin: AdminClient, node: string, driverName: string, nodeId: string): Promise<void> {
  try {
    await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: nodeId }]));
  } catch (e: unknown) {
    if (!(e instanceof AdminApiError && e.reason === "AlreadyExists")) throw e;
    await admin.patch(paths.csiNode(node), [{ op: "add", path: "/spec/drivers/-", value: { name: driverName, nodeID: nodeId, topologyKeys: null } }], "json");
  }
}
