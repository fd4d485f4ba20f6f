import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";
import { establishedConnections } from "../ground/tcp-connections";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";

/**
 * How the attacher fills its caches, against a real kube-apiserver: as
 * client-go v0.37 (upstream v4.13.0) does, one watch per kind that first
 * streams every object (a watch-list), so --kube-api-qps does not ration
 * the sync page by page; and, on a server that refuses watch-lists, a
 * paged list as before. Each case has more PVs than three list pages hold,
 * and a limit of one request a second: paged, the PVs alone would wait for
 * the limiter three times.
 */
const node = "watch-list-node";
const foreignPvs = 1_200;
const throttled = ["--kube-api-qps=1", "--kube-api-burst=1"];

/** Creates `foreignPvs` PVs of another driver, 32 at a time. */
async function createForeignPvs(admin: AdminClient): Promise<void> {
  const names = Array.from({ length: foreignPvs }, (_, i) => `foreign-pv-${i}`);
  for (let start = 0; start < names.length; start += 32) {
    await Promise.all(names.slice(start, start + 32).map((name) => admin.create(paths.persistentVolumes, persistentVolume(name, { driver: "other.csi.test", volumeHandle: name }))));
  }
}

/** apiserverRequests sums kube-apiserver's apiserver_request_total for one verb and resource. */
async function apiserverRequests(cluster: TestCluster, verb: string, resource: string): Promise<number> {
  const res = await fetch(`${cluster.server}/metrics`, { headers: { Authorization: `Bearer ${cluster.adminToken}` }, tls: { ca: cluster.caPem } });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET /metrics: ${res.status} ${text.slice(0, 200)}`);
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{") || !line.includes(`verb="${verb}"`) || !line.includes(`resource="${resource}"`)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** A case: a cluster, the PVs, our VA's PV, and the attacher started once the counters are read. */
function syncCase(driverName: string, extraApiserverArgs: readonly string[]) {
  const state: { cluster?: TestCluster; admin?: AdminClient; setup?: FakeDriverSetup; listsBefore: Record<string, number> } = { listsBefore: {} };
  beforeAll(async () => {
    state.cluster = await startTestCluster({ extraApiserverArgs });
    state.admin = new AdminClient(state.cluster);
    await createForeignPvs(state.admin);
    await state.admin.create(paths.persistentVolumes, persistentVolume("our-pv", { driver: driverName, volumeHandle: "our-vol" }));
    await state.admin.create(paths.volumeAttachments, volumeAttachment("our-va", driverName, node, "our-pv"));
    for (const resource of ["persistentvolumes", "volumeattachments", "csinodes"]) state.listsBefore[resource] = await apiserverRequests(state.cluster, "LIST", resource);
    state.setup = await startFakeDriverSetup(state.cluster, state.admin, { driverName, nodes: [node], attacherArgs: throttled });
  }, 120_000);
  afterAll(async () => {
    await stopFakeDriverSetup(state.setup);
    await state.cluster?.stop();
  });
  return state;
}

describe("filling the caches", () => {
  describe("on a kube-apiserver that serves watch-lists", () => {
    const state = syncCase("watch-list.fake.csi.test", []);

    it("syncs every kind through one watch each, with no LIST request, and attaches", async () => {
      const { cluster, admin, setup } = state;
      if (!cluster || !admin || !setup) throw new Error("the case did not start");
      await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("our-va"), (va) => va?.status?.attached === true);
      const listsAfter: Record<string, number> = {};
      for (const resource of Object.keys(state.listsBefore)) listsAfter[resource] = await apiserverRequests(cluster, "LIST", resource);
      expect(listsAfter).toEqual(state.listsBefore);
      const log = setup.attacher.log();
      expect(log).toContain(`"Listed" kind="PersistentVolume" count=${foreignPvs + 1} `);
      expect(log).not.toContain("falling back to a paged list");
    });

    it("holds one connection to kube-apiserver, its three watches and every request streams of it (HTTP/2, as client-go)", async () => {
      const { cluster, admin, setup } = state;
      if (!cluster || !admin || !setup) throw new Error("the case did not start");
      await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("our-va"), (va) => va?.status?.attached === true);
      expect(establishedConnections(setup.attacher.process.pid, Number(new URL(cluster.server).port))).toBe(1);
    });
  });

  describe("on a kube-apiserver that refuses watch-lists (WatchList off)", () => {
    const state = syncCase("paged-list.fake.csi.test", ["--feature-gates=WatchList=false"]);

    it("falls back to a paged list of each kind, says why, and attaches", async () => {
      const { cluster, admin, setup } = state;
      if (!cluster || !admin || !setup) throw new Error("the case did not start");
      await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("our-va"), (va) => va?.status?.attached === true);
      // Three pages of 500 for the PVs: the lists are paged, as client-go's pager pages them.
      expect((await apiserverRequests(cluster, "LIST", "persistentvolumes")) - (state.listsBefore["persistentvolumes"] ?? 0)).toBeGreaterThanOrEqual(3);
      const log = setup.attacher.log();
      expect(log).toContain(`"Listed" kind="PersistentVolume" count=${foreignPvs + 1} `);
      expect(log).toMatch(/"The watch-list request failed, falling back to a paged list" kind="PersistentVolume" err=".*WatchList/);
    });
  });
});
