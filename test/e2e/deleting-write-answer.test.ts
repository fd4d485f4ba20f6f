import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { cachedObjectParsers } from "../../src/controller/cached-objects";
import { AttacherApi } from "../../src/controller/attacher-api";
import { finalizerName } from "../../src/controller/driver-names";
import { VolumeAttachmentWriter } from "../../src/controller/va-writer";
import { KubeClient } from "../../src/kube/http-client";
import { loadKubeConnection } from "../../src/kube/kubeconfig";
import type { PersistentVolume } from "../../src/kube/objects/persistent-volume";
import type { VolumeAttachment } from "../../src/kube/objects/volume-attachment";
import { Store } from "../../src/kube/store";
import { AdminClient } from "../ground/admin-client";
import { apiserverRequestCount } from "../ground/apiserver-request-count";
import { paths, volumeAttachment } from "../ground/objects";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";

/**
 * kube-apiserver answers the patch that removes the last finalizer of a VA
 * being deleted (and so deletes it) with the VA as written, under the
 * resourceVersion it was last stored with: the version at which the
 * deletion set deletionTimestamp, which its watch event brings into the
 * cache with the finalizer still on. The attacher's
 * own client, cache and VA writer, in this process, against a real
 * kube-apiserver: the cache holds that version, as it does whenever the
 * watch event came before the answer (half the detaches of a busy
 * attacher), so the race that decides it in the attacher is settled here.
 */
const driverName = "answer.fake.csi.test";
let cluster: TestCluster;
let admin: AdminClient;
let client: KubeClient;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  client = new KubeClient({ connection: await loadKubeConnection({ kubeconfig: cluster.kubeconfigPath }) });
});

afterAll(async () => {
  await cluster?.stop();
});

/** deletingVa creates an attached VA held by our finalizer, deletes it, and returns it as its deletion's watch event shows it. */
async function deletingVa(name: string): Promise<unknown> {
  await admin.create(paths.volumeAttachments, { ...volumeAttachment(name, driverName, "node-1", "pv-1"), metadata: { name, finalizers: [finalizerName(driverName)] } });
  await admin.request("PATCH", `${paths.volumeAttachment(name)}/status`, { status: { attached: true, attachmentMetadata: { devicePath: "/dev/x" } } }, "application/merge-patch+json");
  await admin.request("DELETE", paths.volumeAttachment(name));
  return admin.request("GET", paths.volumeAttachment(name));
}

describe("the answer to the write that deletes a VA", () => {
  it("comes under the version the VA was last stored with, without the finalizer the write removed", async () => {
    const before = (await deletingVa("answered")) as { metadata: { resourceVersion: string; finalizers: string[] } };
    const answer = await admin.request<{ metadata: { resourceVersion: string; finalizers?: string[] } }>("PATCH", paths.volumeAttachment("answered"), { metadata: { finalizers: null } }, "application/merge-patch+json");
    expect({ before: before.metadata.finalizers, answerVersion: answer.metadata.resourceVersion, answerFinalizers: answer.metadata.finalizers ?? [] }).toEqual({
      before: [finalizerName(driverName)],
      answerVersion: before.metadata.resourceVersion,
      answerFinalizers: [],
    });
  });

  it("leads the VA writer to send no status patch, which could only answer NotFound, although the cache holds that version", async () => {
    const parse = cachedObjectParsers(driverName);
    const vas = new Store<VolumeAttachment>();
    const cached = parse.volumeAttachment(await deletingVa("detached"));
    vas.upsert(cached);
    const writer = new VolumeAttachmentWriter({ api: new AttacherApi(client, { vas, pvs: new Store<PersistentVolume>(), parse }), driverName });
    const statusPatches = () => apiserverRequestCount(cluster, { verb: "PATCH", resource: "volumeattachments", subresource: "status" });
    const before = await statusPatches();
    await writer.markDetached(cached);
    const gone = await admin.request("GET", paths.volumeAttachment("detached")).then(
      () => false,
      () => true,
    );
    expect({ gone, statusPatches: (await statusPatches()) - before }).toEqual({ gone: true, statusPatches: 0 });
  });
});
