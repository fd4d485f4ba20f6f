import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminApiError, AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { startAttacher, type AttacherProcess } from "../ground/attacher-process";
import { csiNode, paths, persistentVolume, volumeAttachment, type PersistentVolumeOptions, type VolumeAttachmentJson, hasSettledAttachError } from "../ground/objects";
import { callsFor, rawPersistentVolume, ruleVolumeAttachment } from "./support/rule-objects";
import { grantSecretRead, upstreamRbacKubeconfig } from "./support/upstream-rbac";

/**
 * Bad input, one row at a time, against one attacher that runs with only
 * the RBAC of deploy/kubernetes/rbac.yaml: each bad VA ends with a clear message in
 * upstream's words (or the API server refuses it, so the attacher never
 * sees it), and a good VA created beside it in the same row still attaches.
 */
let cluster: TestCluster;
let admin: AdminClient;
let driver: FakeCsiDriver;
let attacher: AttacherProcess;
const driverName = "badinput.fake.csi.test";
const node = "bad-node";
const nodeWithoutDriver = "bad-node-nodriver";
const grantedNamespace = "granted";
/** The driver's gRPC server refuses requests over this size, as grpc-go's 4 MiB default does at scale. */
const maxRequestBytes = 64 * 1024;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  const dir = mkdtempSync(join(tmpdir(), "e2e-bad-input-"));
  const user = await upstreamRbacKubeconfig(cluster, admin, dir);
  await admin.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: grantedNamespace } });
  await grantSecretRead(cluster, admin, user, grantedNamespace);
  await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
  await admin.create(paths.csiNodes, csiNode(nodeWithoutDriver, [{ name: "someone.else.csi", nodeID: "x" }]));
  driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName, maxReceiveMessageBytes: maxRequestBytes } });
  attacher = await startAttacher({
    kubeconfig: user.kubeconfig,
    csiAddress: driver.csiSocket,
    logDir: dir,
    args: ["--timeout=5s", "--retry-interval-start=100ms", "--retry-interval-max=2s"],
  });
});

afterAll(async () => {
  await attacher?.[Symbol.asyncDispose]();
  await driver?.[Symbol.asyncDispose]();
  await cluster?.stop();
});

/** What a row expects of its bad VA. */
type Outcome =
  /** The attacher saved this attachError (whole message). */
  | { readonly attachError: string | RegExp }
  /** The attacher logged this line and wrote nothing to the VA. */
  | { readonly logLine: RegExp }
  /** The API server refused the object with this message: the attacher can never see it. */
  | { readonly refusedByApiserver: string };

interface Row {
  /** Names the row's objects (`bad-<id>`, `good-<id>`): short, unique, DNS-safe. */
  readonly id: string;
  /** The rule, as the test's name. */
  readonly rule: string;
  /** Creates the bad VA `bad-<id>` and whatever it needs. */
  readonly arrange: (id: string) => Promise<unknown>;
  readonly outcome: Outcome;
}

const pv = (id: string, options: Partial<PersistentVolumeOptions> = {}) =>
  admin.create(paths.persistentVolumes, persistentVolume(`pv-${id}`, { driver: driverName, volumeHandle: `vol-${id}`, ...options }));
const va = (id: string, pvName = `pv-${id}`, nodeName = node) => admin.create(paths.volumeAttachments, volumeAttachment(`bad-${id}`, driverName, nodeName, pvName));
const inlineCsi = (id: string) => ({ driver: driverName, volumeHandle: `vol-${id}` });

const rows: readonly Row[] = [
  {
    id: "nosource",
    rule: "a VA with no source is refused by the API server",
    arrange: (id) => admin.create(paths.volumeAttachments, { ...volumeAttachment(`bad-${id}`, driverName, node, ""), spec: { attacher: driverName, nodeName: node, source: {} } }),
    outcome: { refusedByApiserver: "must specify exactly one of inlineVolumeSpec and persistentVolumeName" },
  },
  {
    id: "bothsources",
    rule: "a VA with both a PV and an inline spec is refused by the API server",
    arrange: (id) =>
      admin.create(paths.volumeAttachments, {
        ...volumeAttachment(`bad-${id}`, driverName, node, ""),
        spec: { attacher: driverName, nodeName: node, source: { persistentVolumeName: `pv-${id}`, inlineVolumeSpec: { accessModes: ["ReadWriteOnce"], csi: inlineCsi(id) } } },
      }),
    outcome: { refusedByApiserver: "must specify exactly one of inlineVolumeSpec and persistentVolumeName" },
  },
  {
    id: "nopv",
    rule: "a VA naming a PV that does not exist gets the lister's NotFound",
    arrange: (id) => va(id, "pv-absent"),
    outcome: { attachError: 'persistentvolume "pv-absent" not found' },
  },
  {
    id: "nfs",
    rule: "a VA of a PV with an in-tree source of a plugin CSI migration does not cover is refused",
    arrange: async (id) => {
      await admin.create(paths.persistentVolumes, rawPersistentVolume(`pv-${id}`, { nfs: { server: "nfs.example", path: "/export" } }));
      await va(id);
    },
    outcome: { attachError: "pv spec contained non-csi source that was not migrated" },
  },
  {
    id: "pvnosource",
    rule: "a PV with no volume source at all is refused by the API server",
    arrange: (id) => admin.create(paths.persistentVolumes, rawPersistentVolume(`pv-${id}`, {})),
    outcome: { refusedByApiserver: "must specify a volume type" },
  },
  {
    id: "nocsinode",
    rule: "a VA on a node without a CSINode gets the lister's NotFound",
    arrange: async (id) => {
      await pv(id);
      await va(id, `pv-${id}`, "bad-node-absent");
    },
    outcome: { attachError: 'csinode.storage.k8s.io "bad-node-absent" not found' },
  },
  {
    id: "nodriver",
    rule: "a VA on a node whose CSINode lacks the driver is refused",
    arrange: async (id) => {
      await pv(id);
      await va(id, `pv-${id}`, nodeWithoutDriver);
    },
    outcome: { attachError: `CSINode ${nodeWithoutDriver} does not contain driver ${driverName}` },
  },
  {
    id: "rwop-pv",
    rule: "a PV with ReadWriteOncePod and another access mode is refused by the API server",
    arrange: (id) => pv(id, { accessModes: ["ReadWriteOncePod", "ReadWriteOnce"] }),
    outcome: { refusedByApiserver: "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes" },
  },
  {
    id: "rwop-inline",
    rule: "an inline volume with ReadWriteOncePod and another access mode is refused by the API server",
    arrange: (id) =>
      admin.create(
        paths.volumeAttachments,
        ruleVolumeAttachment(`bad-${id}`, { attacher: driverName, node, inline: { accessModes: ["ReadWriteOncePod", "ReadWriteOnce"], csi: inlineCsi(id) } }),
      ),
    // The attacher's own wording for it (csi-lib-utils') is pinned by unit/controller/access-mode.test.ts.
    outcome: { refusedByApiserver: "spec.source.inlineVolumeSpec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes" },
  },
  {
    id: "rox-rwo",
    rule: "a PV with ReadOnlyMany and ReadWriteOnce is refused in csi-lib-utils' words",
    arrange: async (id) => {
      await pv(id, { accessModes: ["ReadOnlyMany", "ReadWriteOnce"] });
      await va(id);
    },
    outcome: { attachError: "CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume" },
  },
  {
    id: "nomodes-pv",
    rule: "a PV with no access mode is refused by the API server",
    arrange: (id) => pv(id, { accessModes: [] }),
    outcome: { refusedByApiserver: "spec.accessModes: Required value" },
  },
  {
    id: "nomodes-inline",
    rule: "an inline volume with no access mode is refused by the API server",
    arrange: (id) => admin.create(paths.volumeAttachments, ruleVolumeAttachment(`bad-${id}`, { attacher: driverName, node, inline: { accessModes: [], csi: inlineCsi(id) } })),
    // unsupported AccessMode combination: [] (csi-lib-utils) is pinned by unit/controller/access-mode.test.ts.
    outcome: { refusedByApiserver: "spec.source.inlineVolumeSpec.accessModes: Required value" },
  },
  {
    id: "nosecret",
    rule: "a PV whose controllerPublishSecretRef names a missing Secret gets the Secret's NotFound",
    arrange: async (id) => {
      await pv(id, { controllerPublishSecretRef: { name: "absent", namespace: grantedNamespace } });
      await va(id);
    },
    outcome: { attachError: `failed to load secret "${grantedNamespace}/absent": secrets "absent" not found` },
  },
  {
    id: "forbidden",
    rule: "a PV whose controllerPublishSecretRef names a Secret the attacher may not read gets the API server's Forbidden",
    arrange: async (id) => {
      await admin.create(paths.secrets("default"), { apiVersion: "v1", kind: "Secret", metadata: { name: "off-limits", namespace: "default" }, data: { password: btoa("never-read") } });
      await pv(id, { controllerPublishSecretRef: { name: "off-limits", namespace: "default" } });
      await va(id);
    },
    outcome: {
      attachError:
        'failed to load secret "default/off-limits": secrets "off-limits" is forbidden: User "system:serviceaccount:default:csi-attacher" cannot get resource "secrets" in API group "" in the namespace "default"',
    },
  },
  {
    id: "huge",
    rule: "a PV whose volume attributes make the request bigger than the driver accepts gets the driver's ResourceExhausted",
    arrange: async (id) => {
      await pv(id, { volumeAttributes: { blob: "x".repeat(maxRequestBytes + 1024) } });
      await va(id);
    },
    outcome: { attachError: new RegExp(`^rpc error: code = ResourceExhausted desc = Received message larger than max \\(\\d+ vs ${maxRequestBytes}\\)$`) },
  },
  {
    id: "foreign",
    rule: "a VA of another attacher is logged as skipped and left untouched",
    arrange: async (id) => {
      await admin.create(paths.volumeAttachments, volumeAttachment(`bad-${id}`, "other.csi.example", node, `pv-${id}`));
    },
    outcome: { logLine: /"Skipping VolumeAttachment for attacher" va="bad-foreign" attacher="other.csi.example"/ },
  },
];

describe("bad VolumeAttachments, PVs and nodes", () => {
  for (const row of rows) {
    const { id } = row;
    it(`${row.rule}, and a good VA beside it attaches`, async () => {
      const { outcome } = row;
      if ("refusedByApiserver" in outcome) {
        const refusal = await row.arrange(id).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(refusal).toBeInstanceOf(AdminApiError);
        expect({ reason: (refusal as AdminApiError).reason, message: (refusal as AdminApiError).message }).toMatchObject({ reason: "Invalid" });
        expect((refusal as AdminApiError).message).toContain(outcome.refusedByApiserver);
      } else {
        await row.arrange(id);
      }

      await pv(`good-${id}`);
      await admin.create(paths.volumeAttachments, volumeAttachment(`good-${id}`, driverName, node, `pv-good-${id}`));

      if ("attachError" in outcome) {
        // A row that expects the missing-PV error itself waits for exactly it.
        const expected = outcome.attachError;
        const failed = await admin.waitFor<VolumeAttachmentJson>(
          paths.volumeAttachment(`bad-${id}`),
          (got) => hasSettledAttachError(got) || got?.status?.attachError?.message === expected,
          60_000,
        );
        const message = failed?.status?.attachError?.message ?? "";
        if (typeof outcome.attachError === "string") expect(message).toBe(outcome.attachError);
        else expect(message).toMatch(outcome.attachError);
        // The log names the VA beside the error too (written just after the status).
        await attacher.waitForLog(new RegExp(`"Error processing" queue="csi-attacher-va" name="bad-${id}" err=`));
      }
      if ("logLine" in outcome) {
        await attacher.waitForLog(outcome.logLine);
        const untouched = await admin.get<VolumeAttachmentJson>(paths.volumeAttachment(`bad-${id}`));
        expect({ status: untouched.status, finalizers: untouched.metadata.finalizers }).toEqual({ status: { attached: false }, finalizers: undefined });
      }

      const good = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(`good-${id}`), (got) => got?.status?.attached === true, 60_000);
      expect(good?.status).toEqual({ attached: true, attachmentMetadata: { devicePath: `/dev/fake/vol-good-${id}` } });
      expect(attacher.process.running).toBe(true);
    });
  }

  it("never published a bad VA's volume", async () => {
    const published = await driver.control.published();
    expect(Object.keys(published).filter((volume) => !volume.startsWith("vol-good-")).sort()).toEqual([]);
    // The oversized request never reached a handler; the secrets' rows never called the driver.
    expect([...(await callsFor(driver, "ControllerPublishVolume", "vol-huge")), ...(await callsFor(driver, "ControllerPublishVolume", "vol-forbidden"))]).toEqual([]);
  });
});
