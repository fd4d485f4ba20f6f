import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminApiError, AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, type PersistentVolumeOptions, type VolumeAttachmentJson, hasSettledAttachError } from "../ground/objects";
import { callsFor, ruleVolumeAttachment } from "./support/rule-objects";

/**
 * How the ControllerPublishVolume request is built (spec § Attach step 2),
 * against kube-apiserver and two fault-injecting drivers: "plain" reports
 * only PUBLISH_UNPUBLISH_VOLUME and runs without --default-fstype; "rich"
 * adds PUBLISH_READONLY and SINGLE_NODE_MULTI_WRITER and runs with
 * --default-fstype=ext4. The requests are read from the drivers' call logs.
 */
let cluster: TestCluster;
let admin: AdminClient;
let plain: FakeDriverSetup;
let rich: FakeDriverSetup;
const node = "request-node";

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  plain = await startFakeDriverSetup(cluster, admin, {
    driverName: "plain.fake.csi.test",
    nodes: [node],
    attacherArgs: ["--retry-interval-start=100ms", "--retry-interval-max=1s"],
  });
  rich = await startFakeDriverSetup(cluster, admin, {
    driverName: "rich.fake.csi.test",
    nodes: [node],
    config: { controllerCapabilities: ["PUBLISH_UNPUBLISH_VOLUME", "PUBLISH_READONLY", "SINGLE_NODE_MULTI_WRITER"] },
    attacherArgs: ["--retry-interval-start=100ms", "--retry-interval-max=1s", "--default-fstype=ext4"],
  });
});

afterAll(async () => {
  await stopFakeDriverSetup(plain);
  await stopFakeDriverSetup(rich);
  await cluster?.stop();
});

type Outcome = { request: Record<string, unknown> } | { attachError: string | undefined };

/** attachOutcome creates a PV and VA for `setup` and returns the publish request the driver saw, or the attachError. */
async function attachOutcome(setup: FakeDriverSetup, volume: string, pv: Omit<PersistentVolumeOptions, "driver" | "volumeHandle">): Promise<Outcome> {
  // VA and PV names are cluster-wide: each driver gets its own; the volume handle is the same for both.
  const name = `${setup === plain ? "plain" : "rich"}-${volume}`;
  const volumeHandle = `vol-${volume}`;
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: setup.driverName, volumeHandle, ...pv }));
  await admin.create(paths.volumeAttachments, ruleVolumeAttachment(name, { attacher: setup.driverName, node, pv: `pv-${name}` }));
  const settled = (v: VolumeAttachmentJson | null) => v?.status?.attached === true || hasSettledAttachError(v);
  const va = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), settled, 30_000);
  if (!va?.status?.attached) return { attachError: va?.status?.attachError?.message };
  const [call] = await callsFor(setup.driver, "ControllerPublishVolume", volumeHandle);
  return { request: call?.request ?? {} };
}

async function accessMode(setup: FakeDriverSetup, name: string, accessModes: string[]): Promise<string | undefined> {
  const outcome = await attachOutcome(setup, name, { accessModes });
  if ("attachError" in outcome) return `error: ${outcome.attachError}`;
  return (outcome.request.volumeCapability as { accessMode?: { mode?: string } } | undefined)?.accessMode?.mode;
}

describe("publish request", () => {
  it("maps access modes as the spec's table says, with and without SINGLE_NODE_MULTI_WRITER", async () => {
    // The API server refuses ReadWriteOncePod with another mode, and no mode
    // (see the last test); those rows are unit-tested (unit/controller/access-mode).
    const rows: Record<string, string[]> = {
      rwop: ["ReadWriteOncePod"],
      rwx: ["ReadWriteMany", "ReadOnlyMany"],
      "rox-rwo": ["ReadOnlyMany", "ReadWriteOnce"],
      rox: ["ReadOnlyMany"],
      rwo: ["ReadWriteOnce"],
    };
    const table: Record<string, [string | undefined, string | undefined]> = {};
    for (const [row, modes] of Object.entries(rows)) {
      table[row] = [await accessMode(plain, `mode-${row}`, modes), await accessMode(rich, `mode-${row}`, modes)];
    }
    expect(table).toEqual({
      rwop: ["SINGLE_NODE_WRITER", "SINGLE_NODE_SINGLE_WRITER"],
      rwx: ["MULTI_NODE_MULTI_WRITER", "MULTI_NODE_MULTI_WRITER"],
      "rox-rwo": [
        "error: CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume",
        "error: CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume",
      ],
      rox: ["MULTI_NODE_READER_ONLY", "MULTI_NODE_READER_ONLY"],
      rwo: ["SINGLE_NODE_WRITER", "SINGLE_NODE_MULTI_WRITER"],
    });
  });

  it("sends read-only only to a driver with PUBLISH_READONLY, with the PV's fsType, mount options and attributes", async () => {
    const pv = { fsType: "xfs", mountOptions: ["noatime", "discard"], volumeAttributes: { tier: "gold", zone: "z1" }, readOnly: true } as const;
    expect({ plain: await attachOutcome(plain, "ro", pv), rich: await attachOutcome(rich, "ro", pv) }).toEqual({
      plain: {
        request: {
          volumeId: "vol-ro",
          nodeId: `${node}-id`,
          volumeCapability: { mount: { fsType: "xfs", mountFlags: ["noatime", "discard"] }, accessMode: { mode: "SINGLE_NODE_WRITER" } },
          volumeContext: { tier: "gold", zone: "z1" },
        },
      },
      rich: {
        request: {
          volumeId: "vol-ro",
          nodeId: `${node}-id`,
          volumeCapability: { mount: { fsType: "xfs", mountFlags: ["noatime", "discard"] }, accessMode: { mode: "SINGLE_NODE_MULTI_WRITER" } },
          readonly: true,
          volumeContext: { tier: "gold", zone: "z1" },
        },
      },
    });
  });

  it("uses --default-fstype only when the PV names no fsType, and sends a block capability without any fsType", async () => {
    const outcomes = {
      plainMount: await attachOutcome(plain, "nofs", {}),
      richMount: await attachOutcome(rich, "nofs", {}),
      richBlock: await attachOutcome(rich, "block", { volumeMode: "Block", fsType: "ext4" }),
    };
    const capabilities = Object.fromEntries(Object.entries(outcomes).map(([key, outcome]) => [key, "request" in outcome ? outcome.request.volumeCapability : outcome]));
    expect(capabilities).toEqual({
      plainMount: { mount: {}, accessMode: { mode: "SINGLE_NODE_WRITER" } },
      richMount: { mount: { fsType: "ext4" }, accessMode: { mode: "SINGLE_NODE_MULTI_WRITER" } },
      richBlock: { block: {}, accessMode: { mode: "SINGLE_NODE_MULTI_WRITER" } },
    });
  });

  it("cannot be shown the other error rows: the API server refuses ReadWriteOncePod with another mode, and no mode, even inline (they are unit-tested)", async () => {
    const refusal = async (name: string, accessModes: string[]) => {
      const inline = { accessModes, csi: { driver: plain.driverName, volumeHandle: `vol-${name}` } };
      const answer = await admin.create(paths.volumeAttachments, ruleVolumeAttachment(name, { attacher: plain.driverName, node, inline })).catch((e: unknown) => e);
      return answer instanceof AdminApiError ? { status: answer.status, reason: answer.reason } : "accepted";
    };
    expect({ rwopAndRwo: await refusal("inline-rwop-rwo", ["ReadWriteOncePod", "ReadWriteOnce"]), none: await refusal("inline-none", []) }).toEqual({
      rwopAndRwo: { status: 422, reason: "Invalid" },
      none: { status: 422, reason: "Invalid" },
    });
  });
});
