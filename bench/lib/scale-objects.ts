/**
 * The objects of the scale scenario: N own PVs and VAs spread over 100
 * nodes, plus foreign PVs, made once per N with parallel clients and reset
 * between attachers (finalizers and status off, the driver's publications
 * forgotten), so ours and Go each start from the same unattached cluster.
 */
import { createIfAbsent, isNotFound, type KubeObject } from "../../test/ground/admin-client";
import { csiNode, paths, persistentVolume, volumeAttachment } from "../../test/ground/objects";
import { benchDriverName, createForeignPvs, forEachLimited, listAll, setPvFinalizers, type BenchGround } from "./bench-ground";

/** Requests in flight while creating or resetting in bulk: the apiserver is local, the bench process is the limit. */
const scaleConcurrency = 64;

const scalePvPrefix = "scale-pv-";
export const scalePvName = (i: number) => `${scalePvPrefix}${String(i).padStart(6, "0")}`;
export const scaleVaName = (i: number) => `scale-va-${String(i).padStart(6, "0")}`;
export const scaleNodeName = (k: number) => `scale-node-${String(k).padStart(3, "0")}`;
/** Probe VAs (one new attach at a chosen moment) are named from here and reset away between runs. */
export const scaleProbePrefix = "scale-probe-";

interface ListedObject extends KubeObject {
  metadata: { name?: string; finalizers?: string[]; resourceVersion?: string; annotations?: Record<string, string>; deletionTimestamp?: string };
  status?: { attached?: boolean };
}

/** ScaleObjects tracks what exists so each N only adds what the last one lacked. */
export class ScaleObjects {
  /** Own PVs scale-pv-0..pvs-1 exist. */
  #pvs = 0;
  /** VAs scale-va-0..vas-1 exist (some may have been deleted by a detach: reset re-creates them). */
  #vas = 0;
  #foreign = 0;
  #nodesMade = false;

  constructor(
    private readonly ground: BenchGround,
    /** Nodes the VAs are spread over (each with a CSINode for our driver). */
    readonly nodes: number,
  ) {}

  /** nodeOf is the node VA `i` is attached to. */
  nodeOf(i: number): string {
    return scaleNodeName(i % this.nodes);
  }

  /**
   * grow makes `pvs` own PVs, `vas` VAs (of the first `vas` PVs) and
   * `foreign` foreign PVs exist; returns objects created per second.
   */
  async grow(pvs: number, vas: number, foreign: number): Promise<{ created: number; seconds: number }> {
    const { admin } = this.ground;
    const started = performance.now();
    let created = 0;
    if (!this.#nodesMade) {
      await forEachLimited(Array.from({ length: this.nodes }, (_, k) => k), scaleConcurrency, async (k) => {
        await createIfAbsent(admin, paths.csiNodes, csiNode(scaleNodeName(k), [{ name: benchDriverName, nodeID: `${scaleNodeName(k)}-id` }]));
      });
      this.#nodesMade = true;
      created += this.nodes;
    }
    if (foreign > this.#foreign) {
      await createForeignPvs(admin, this.#foreign, foreign - this.#foreign);
      created += foreign - this.#foreign;
      this.#foreign = foreign;
    }
    if (pvs > this.#pvs) {
      await forEachLimited(range(this.#pvs, pvs), scaleConcurrency, async (i) => {
        await createIfAbsent(admin, paths.persistentVolumes, persistentVolume(scalePvName(i), { driver: benchDriverName, volumeHandle: `scale-vol-${i}` }));
      });
      created += pvs - this.#pvs;
      this.#pvs = pvs;
    }
    if (vas > this.#vas) {
      await forEachLimited(range(this.#vas, vas), scaleConcurrency, async (i) => {
        await createIfAbsent(admin, paths.volumeAttachments, this.volumeAttachment(i));
      });
      created += vas - this.#vas;
      this.#vas = vas;
    }
    return { created, seconds: (performance.now() - started) / 1000 };
  }

  /** volumeAttachment is the body of VA `i` (or of a probe VA named `name` for PV `i`). */
  volumeAttachment(i: number, name = scaleVaName(i)) {
    return volumeAttachment(name, benchDriverName, this.nodeOf(i), scalePvName(i));
  }

  /**
   * reset returns the first `vas` VAs to "created, never attached": no
   * finalizer, no annotation, status.attached false; deleted ones are made
   * again, probes are deleted, own PVs lose the attachers' finalizer, and
   * the driver forgets every publication. Returns seconds taken.
   */
  async reset(vas: number): Promise<number> {
    const { admin } = this.ground;
    const started = performance.now();
    const existing = new Map<string, ListedObject>();
    await listAll<ListedObject>(admin, paths.volumeAttachments, (va) => {
      const name = va.metadata.name ?? "";
      if (name.startsWith("scale-")) existing.set(name, va);
    });
    const probes = [...existing.values()].filter((va) => (va.metadata.name ?? "").startsWith(scaleProbePrefix));
    await forEachLimited(probes, scaleConcurrency, async (va) => {
      const name = va.metadata.name ?? "";
      await ignoreNotFound(admin.patch(paths.volumeAttachment(name), { metadata: { finalizers: null } }));
      await ignoreNotFound(admin.delete(paths.volumeAttachment(name)));
    });
    await forEachLimited(range(0, vas), scaleConcurrency, async (i) => {
      const name = scaleVaName(i);
      const va = existing.get(name);
      if (va === undefined || va.metadata.deletionTimestamp !== undefined) {
        if (va !== undefined) {
          await ignoreNotFound(admin.patch(paths.volumeAttachment(name), { metadata: { finalizers: null } }));
          await admin.waitFor(paths.volumeAttachment(name), (o) => o === null);
        }
        await createIfAbsent(admin, paths.volumeAttachments, this.volumeAttachment(i));
        return;
      }
      if ((va.metadata.finalizers?.length ?? 0) > 0 || va.metadata.annotations !== undefined) {
        await admin.patch(paths.volumeAttachment(name), { metadata: { finalizers: null, annotations: null } });
      }
      if (va.status?.attached === true) {
        await admin.patch(`${paths.volumeAttachment(name)}/status`, { status: { attached: false, attachmentMetadata: null } });
      }
    });
    await setPvFinalizers(admin, { held: false, namePrefix: scalePvPrefix, concurrency: scaleConcurrency });
    return (performance.now() - started) / 1000;
  }
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k);
}

/** ignoreNotFound awaits a request whose object may be gone already. */
async function ignoreNotFound(request: Promise<unknown>): Promise<void> {
  try {
    await request;
  } catch (e: unknown) {
    if (!isNotFound(e)) throw e;
  }
}
