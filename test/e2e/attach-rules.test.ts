import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminApiError, AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { csiNode, paths, persistentVolume, type VolumeAttachmentJson, hasSettledAttachError } from "../ground/objects";
import { callsFor, gapsMs, nodeIdAnnotation, prepublishedVa, rawPersistentVolume, ruleVolumeAttachment } from "./support/rule-objects";

/**
 * The attach rules of the spec (§ Attach, § The work queue, § Errors from
 * the driver, § Events that enqueue work) against kube-apiserver and the
 * fault-injecting driver: what lands in the VA, what the driver was asked,
 * and when the attacher retried.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
// A second attacher whose back-off is far longer than its --resync.
let resyncSetup: FakeDriverSetup;
const node = "attach-node";
const startMs = 100;
const maxMs = 800;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, {
    driverName: "attach.fake.csi.test",
    nodes: [node],
    attacherArgs: ["--timeout=1s", `--retry-interval-start=${startMs}ms`, `--retry-interval-max=${maxMs}ms`],
  });
  resyncSetup = await startFakeDriverSetup(cluster, admin, {
    driverName: "resync.fake.csi.test",
    nodes: [node],
    attacherArgs: ["--retry-interval-start=10m", "--retry-interval-max=10m", "--resync=1s"],
  });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await stopFakeDriverSetup(resyncSetup);
  await cluster?.stop();
});

function waitForVa(name: string, predicate: (va: VolumeAttachmentJson | null) => boolean, timeoutMs = 30_000): Promise<VolumeAttachmentJson | null> {
  return admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), predicate, timeoutMs);
}

/** A PV and a VA that already carries our finalizer and node ID: the attacher's only VA writes are then status writes. */
async function createPrepublished(target: FakeDriverSetup, name: string): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: target.driverName, volumeHandle: `vol-${name}` }));
  await admin.create(paths.volumeAttachments, prepublishedVa(name, { attacher: target.driverName, node, pv: `pv-${name}`, finalizer: target.finalizer }));
}

describe("errors and retries", () => {
  it("backs off per item from --retry-interval-start doubling to --retry-interval-max, and its own attachError writes never re-trigger a publish", async () => {
    await setup.driver.control.script("ControllerPublishVolume", [{ code: "Internal", message: "backend busy", times: 6, volumeId: "vol-backoff" }]);
    await createPrepublished(setup, "backoff");
    const failing = await waitForVa("backoff", hasSettledAttachError);
    const attached = await waitForVa("backoff", (va) => va?.status?.attached === true);
    const calls = await callsFor(setup.driver, "ControllerPublishVolume", "vol-backoff");
    const gaps = gapsMs(calls);
    expect({
      codes: calls.map((call) => call.code),
      firstError: { ...failing?.status?.attachError, time: "<time>" },
      status: attached?.status,
      // A re-trigger by our own write would retry within milliseconds; each
      // gap is at least its back-off (a little slack for clock rounding).
      gapsAtLeastBackoff: gaps.map((gap, i) => gap >= Math.min(startMs * 2 ** i, maxMs) * 0.9),
      // Uncapped, the last two would wait 1.6 s and 3.2 s.
      lastGapsCapped: gaps.slice(-2).map((gap) => gap < 1_500),
    }).toEqual({
      codes: ["Internal", "Internal", "Internal", "Internal", "Internal", "Internal", "OK"],
      firstError: { message: "rpc error: code = Internal desc = backend busy", time: "<time>", errorCode: 13 },
      status: { attached: true, attachmentMetadata: { devicePath: "/dev/fake/vol-backoff" } },
      gapsAtLeastBackoff: [true, true, true, true, true, true],
      lastGapsCapped: [true, true],
    });
  });

  it("forgets a VA's failures once it succeeds: its next failure is retried after --retry-interval-start again", async () => {
    await setup.driver.control.script("ControllerPublishVolume", [{ code: "Unavailable", times: 3, volumeId: "vol-forget" }]);
    await createPrepublished(setup, "forget");
    await waitForVa("forget", (va) => va?.status?.attached === true);
    await setup.driver.control.script("ControllerUnpublishVolume", [{ code: "Internal", times: 1, volumeId: "vol-forget" }]);
    await admin.delete(paths.volumeAttachment("forget"));
    await waitForVa("forget", (va) => va === null);
    const unpublishes = await callsFor(setup.driver, "ControllerUnpublishVolume", "vol-forget");
    // Not forgotten, three failures would make this wait 800 ms.
    expect({ codes: unpublishes.map((call) => call.code), quickRetry: gapsMs(unpublishes).map((gap) => gap < 600) }).toEqual({
      codes: ["Internal", "OK"],
      quickRetry: [true],
    });
  });

  it("saves a publish that outlives --timeout as DeadlineExceeded, keeps the VA finalizer (never reported detached), and retries until attached", async () => {
    await setup.driver.control.script("ControllerPublishVolume", [{ hang: true, times: 1, volumeId: "vol-timeout" }]);
    await createPrepublished(setup, "timeout");
    const timedOut = await waitForVa("timeout", hasSettledAttachError);
    const attached = await waitForVa("timeout", (va) => va?.status?.attached === true);
    await setup.driver.control.release();
    expect({
      whileFailing: { finalizers: timedOut?.metadata.finalizers, attached: timedOut?.status?.attached, error: { ...timedOut?.status?.attachError, time: "<time>" } },
      attached: { finalizers: attached?.metadata.finalizers, status: attached?.status },
      codes: (await callsFor(setup.driver, "ControllerPublishVolume", "vol-timeout")).map((call) => call.code),
    }).toEqual({
      whileFailing: {
        finalizers: [setup.finalizer],
        attached: false,
        error: { message: "rpc error: code = DeadlineExceeded desc = context deadline exceeded", time: "<time>", errorCode: 4 },
      },
      attached: { finalizers: [setup.finalizer], status: { attached: true, attachmentMetadata: { devicePath: "/dev/fake/vol-timeout" } } },
      codes: ["Canceled", "OK"],
    });
  });
});

describe("--resync", () => {
  it("re-delivers every cached VA, so one waiting out a 10m back-off is retried within the resync period", async () => {
    await resyncSetup.driver.control.script("ControllerPublishVolume", [{ code: "Internal", times: 1, volumeId: "vol-resync" }]);
    await createPrepublished(resyncSetup, "resync");
    await waitForVa("resync", (va) => va?.status?.attached === true);
    expect((await callsFor(resyncSetup.driver, "ControllerPublishVolume", "vol-resync")).map((call) => call.code)).toEqual(["Internal", "OK"]);
  });
});

describe("sources", () => {
  it("attaches an inline volume (inlineVolumeSpec) with its attributes and no PV write", async () => {
    const inline = {
      accessModes: ["ReadWriteOnce"],
      csi: { driver: setup.driverName, volumeHandle: "vol-inline", volumeAttributes: { origin: "inline" } },
    };
    await admin.create(paths.volumeAttachments, ruleVolumeAttachment("inline", { attacher: setup.driverName, node, inline }));
    const attached = await waitForVa("inline", (va) => va?.status?.attached === true);
    const [publish] = await callsFor(setup.driver, "ControllerPublishVolume", "vol-inline");
    expect({ finalizers: attached?.metadata.finalizers, request: publish?.request }).toEqual({
      finalizers: [setup.finalizer],
      request: {
        volumeId: "vol-inline",
        nodeId: `${node}-id`,
        volumeCapability: { mount: {}, accessMode: { mode: "SINGLE_NODE_WRITER" } },
        volumeContext: { origin: "inline" },
      },
    });
  });

  it("refuses a PV without a CSI source in upstream's words, before adding the VA finalizer", async () => {
    await admin.create(paths.persistentVolumes, rawPersistentVolume("pv-nfs", { nfs: { server: "nfs.example", path: "/export" } }));
    await admin.create(paths.volumeAttachments, ruleVolumeAttachment("nfs", { attacher: setup.driverName, node, pv: "pv-nfs" }));
    const failed = await waitForVa("nfs", hasSettledAttachError);
    expect({ message: failed?.status?.attachError?.message, finalizers: failed?.metadata.finalizers }).toEqual({
      message: "pv spec contained non-csi source that was not migrated",
      finalizers: undefined,
    });
  });
  it("cannot be shown a VA with both sources or neither: the API server refuses them (they are unit-tested)", async () => {
    const refusal = async (name: string, source: object) => {
      const va = { ...ruleVolumeAttachment(name, { attacher: setup.driverName, node, pv: "pv-any" }) };
      const answer = await admin.create(paths.volumeAttachments, { ...va, spec: { ...va.spec, source } }).catch((e: unknown) => e);
      return answer instanceof AdminApiError ? { status: answer.status, reason: answer.reason } : "accepted";
    };
    const inline = { accessModes: ["ReadWriteOnce"], csi: { driver: setup.driverName, volumeHandle: "vol-both" } };
    expect({ both: await refusal("both", { persistentVolumeName: "pv-any", inlineVolumeSpec: inline }), neither: await refusal("neither", {}) }).toEqual({
      both: { status: 422, reason: "Invalid" },
      neither: { status: 422, reason: "Invalid" },
    });
  });
});

describe("node IDs on attach", () => {
  it("publishes to the CSINode's node ID and rewrites a stale node-ID annotation", async () => {
    await admin.create(paths.persistentVolumes, persistentVolume("pv-stale", { driver: setup.driverName, volumeHandle: "vol-stale" }));
    await admin.create(
      paths.volumeAttachments,
      ruleVolumeAttachment("stale", { attacher: setup.driverName, node, pv: "pv-stale", annotations: { [nodeIdAnnotation]: "old-id" } }),
    );
    const attached = await waitForVa("stale", (va) => va?.status?.attached === true);
    const [publish] = await callsFor(setup.driver, "ControllerPublishVolume", "vol-stale");
    expect({ annotations: attached?.metadata.annotations, nodeId: (publish?.request as { nodeId?: string }).nodeId }).toEqual({
      annotations: { [nodeIdAnnotation]: `${node}-id` },
      nodeId: `${node}-id`,
    });
  });

  it("refuses to attach on a node whose CSINode does not list the driver, and never falls back to the annotation", async () => {
    await admin.create(paths.csiNodes, csiNode("other-driver-node", [{ name: "someone.else.csi", nodeID: "x" }]));
    await admin.create(paths.persistentVolumes, persistentVolume("pv-nodriver", { driver: setup.driverName, volumeHandle: "vol-nodriver" }));
    await admin.create(
      paths.volumeAttachments,
      ruleVolumeAttachment("nodriver", { attacher: setup.driverName, node: "other-driver-node", pv: "pv-nodriver", annotations: { [nodeIdAnnotation]: "remembered" } }),
    );
    const failed = await waitForVa("nodriver", hasSettledAttachError);
    expect({ message: failed?.status?.attachError?.message, calls: await callsFor(setup.driver, "ControllerPublishVolume", "vol-nodriver") }).toEqual({
      message: `CSINode other-driver-node does not contain driver ${setup.driverName}`,
      calls: [],
    });
  });
});

describe("trivial handler", () => {
  it("marks VAs attached with no finalizer and no driver call when the driver has no controller service at all", async () => {
    const trivial = await startFakeDriverSetup(cluster, admin, {
      driverName: "nocontroller.fake.csi.test",
      config: { pluginCapabilities: [] },
      attacherArgs: [],
    });
    try {
      await admin.create(paths.persistentVolumes, persistentVolume("pv-nocontroller", { driver: trivial.driverName, volumeHandle: "vol-nocontroller" }));
      await admin.create(paths.volumeAttachments, ruleVolumeAttachment("nocontroller", { attacher: trivial.driverName, node, pv: "pv-nocontroller" }));
      const attached = await waitForVa("nocontroller", (va) => va?.status?.attached === true);
      const pv = await admin.get<{ metadata: { name: string; finalizers?: string[] } }>(paths.persistentVolume("pv-nocontroller"));
      expect({
        va: { finalizers: attached?.metadata.finalizers, annotations: attached?.metadata.annotations, status: attached?.status },
        pvFinalizers: pv.metadata.finalizers,
        calls: (await trivial.driver.control.calls()).map((call) => call.method).filter((method) => method.startsWith("Controller")),
      }).toEqual({
        va: { finalizers: undefined, annotations: undefined, status: { attached: true } },
        pvFinalizers: ["kubernetes.io/pv-protection"],
        calls: [],
      });
      await admin.delete(paths.volumeAttachment("nocontroller"));
      await waitForVa("nocontroller", (va) => va === null);
    } finally {
      await stopFakeDriverSetup(trivial);
    }
  });
});
