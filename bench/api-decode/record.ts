/**
 * `bun run bench/api-decode/record.ts --out DIR [--n 10000]`: starts a test
 * ground, fills it with N VolumeAttachments, PersistentVolumes and CSINodes
 * as an attacher's steady state leaves them (finalizers, VAs attached, PVs
 * bound to a claim, the server's managedFields), and records what
 * kube-apiserver sends for them, once as JSON and once as protobuf: list
 * pages of 500 (client-go's pager, and ours) and a watch from
 * resourceVersion 0 (one ADDED event per object). decode.ts reads the files.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { AdminClient, createIfAbsent } from "../../test/cluster/admin-client";
import { stopAllManaged } from "../../test/cluster/managed-process";
import { startTestCluster } from "../../test/cluster/test-cluster";
import { csiNode, paths, persistentVolume, volumeAttachment } from "../../test/e2e/support/objects";
import { forEachLimited } from "../lib/bench-ground";
import { decodePage, encodings, kinds, listPagesFile, watchFile, type Encoding, type Kind } from "./fixtures";

const driver = "bench.csi.test";
const finalizer = "external-attacher/bench-csi-test";
const pageSize = 500;
const concurrency = 48;

const { values } = parseArgs({ options: { out: { type: "string" }, n: { type: "string", default: "10000" } } });
if (values.out === undefined) throw new Error("usage: bun run bench/api-decode/record.ts --out DIR [--n 10000]");
const out = resolve(values.out);
const n = Number(values.n);
mkdirSync(out, { recursive: true });

const cluster = await startTestCluster();
try {
  const admin = new AdminClient(cluster);
  const indexes = Array.from({ length: n }, (_, i) => i);
  const name = (prefix: string, i: number) => `${prefix}-${String(i).padStart(6, "0")}`;
  const node = (i: number) => name("node", i % 100);
  const started = performance.now();
  await forEachLimited(indexes, concurrency, async (i) => {
    await createIfAbsent(admin, paths.csiNodes, csiNode(name("node", i), [{ name: driver, nodeID: `${name("node", i)}-id` }, { name: "other.csi.test", nodeID: `i-${i.toString(16).padStart(17, "0")}` }]));
    const pv = persistentVolume(name("pv", i), {
      driver,
      volumeHandle: `vol-${i.toString(16).padStart(17, "0")}`,
      fsType: "ext4",
      volumeAttributes: { "storage.kubernetes.io/csiProvisionerIdentity": "1795690000000-8081-bench.csi.test", type: "ssd" },
    });
    await createIfAbsent(admin, paths.persistentVolumes, {
      ...pv,
      metadata: { ...pv.metadata, finalizers: ["kubernetes.io/pv-protection", finalizer], annotations: { "pv.kubernetes.io/provisioned-by": driver } },
      spec: { ...pv.spec, claimRef: { kind: "PersistentVolumeClaim", namespace: "default", name: name("claim", i), uid: crypto.randomUUID(), apiVersion: "v1", resourceVersion: "1" } },
    });
    const va = volumeAttachment(name("csi", i), driver, node(i), name("pv", i));
    await createIfAbsent(admin, paths.volumeAttachments, { ...va, metadata: { ...va.metadata, finalizers: [finalizer] } });
    await admin.patch(`${paths.volumeAttachment(name("csi", i))}/status`, { status: { attached: true, attachmentMetadata: { devicePath: `/dev/disk/by-id/bench-${i}` } } });
  });
  console.log(`${n} of each kind made in ${((performance.now() - started) / 1000).toFixed(0)} s`);

  const kindPaths: Record<Kind, string> = { va: paths.volumeAttachments, pv: paths.persistentVolumes, csinode: paths.csiNodes };
  const accept: Record<Encoding, string> = { json: "application/json", protobuf: "application/vnd.kubernetes.protobuf" };
  const get = async (path: string, encoding: Encoding): Promise<Response> => {
    const response = await fetch(cluster.server + path, { headers: { Authorization: `Bearer ${cluster.adminToken}`, Accept: accept[encoding] }, tls: { ca: cluster.caPem } });
    if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
    return response;
  };
  for (const kind of kinds) {
    for (const encoding of encodings) {
      // Pages as one file: each page is a 4-byte big-endian length and the body.
      const pages: Uint8Array[] = [];
      let continueToken = "";
      do {
        const query = new URLSearchParams({ limit: String(pageSize) });
        if (continueToken) query.set("continue", continueToken);
        const body = new Uint8Array(await (await get(`${kindPaths[kind]}?${query}`, encoding)).arrayBuffer());
        pages.push(lengthPrefix(body.length), body);
        continueToken = decodePage[encoding](kind, body).continueToken;
      } while (continueToken !== "");
      writeFileSync(join(out, listPagesFile(kind, encoding)), Buffer.concat(pages));
      // The watch's stream as it came: ADDED for each object, then the server's end at timeoutSeconds.
      const watch = await get(`${kindPaths[kind]}?watch=true&resourceVersion=0&timeoutSeconds=5`, encoding);
      writeFileSync(join(out, watchFile(kind, encoding)), new Uint8Array(await watch.arrayBuffer()));
      console.log(`${kind} ${encoding}: ${pages.length / 2} pages recorded, and the watch`);
    }
  }
} finally {
  await cluster.stop();
  await stopAllManaged();
}

function lengthPrefix(length: number): Uint8Array {
  const prefix = new Uint8Array(4);
  new DataView(prefix.buffer).setUint32(0, length);
  return prefix;
}
