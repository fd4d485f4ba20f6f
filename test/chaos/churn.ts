import { AdminApiError, type AdminClient, type KubeObject } from "../ground/admin-client";
import { paths, persistentVolume, volumeAttachment } from "../ground/objects";

/** Options of {@link Churn}. */
export interface ChurnOptions {
  readonly admin: AdminClient;
  readonly driverName: string;
  /** Nodes VAs are spread over (each has a CSINode for the driver). */
  readonly nodes: readonly string[];
  /** VAs to create before the churn may end. */
  readonly total: number;
  /** Most VAs alive at once; past it the churn deletes before it creates. */
  readonly maxLive: number;
  /** Pause between two operations, so the churn spans the faults. */
  readonly paceMs: number;
  /** Seeded random numbers, so a run can be repeated. */
  readonly random: () => number;
}

/** Labels of the objects the churn makes, never reused: every VA life has its own PV and volume. */
const prefix = "chaos";
/** The protection kube-controller-manager would remove; on a bare apiserver the test must. */
const pvProtection = "kubernetes.io/pv-protection";

/**
 * Churn creates and deletes VolumeAttachments (each with its own PV) at a
 * steady pace while faults come and go, riding out an API server that is
 * down by retrying. Deleting a VA sometimes deletes its PV at once, while
 * the VA still names it, and sometimes later.
 */
export class Churn {
  created = 0;
  deletedVas = 0;
  deletedPvs = 0;
  /** Requests repeated because the API server was away. */
  retries = 0;
  readonly #live: number[] = [];
  /** PVs whose VA was deleted but which are kept for a while. */
  readonly #orphans: number[] = [];

  constructor(private readonly options: ChurnOptions) {}

  /** live is how many VAs the churn has created and not deleted. */
  get live(): number {
    return this.#live.length;
  }

  /** run churns until `done()` says so and at least `total` VAs were created. */
  async run(done: () => boolean): Promise<void> {
    const { total, maxLive, paceMs, random } = this.options;
    while (this.created < total || !done()) {
      // Past `total`, the churn keeps about half of maxLive alive, so that the
      // end state has attached VAs to check as well as deleted ones.
      const create = this.created >= total ? this.#live.length < maxLive / 2 : this.#live.length < maxLive && (random() < 0.6 || this.#live.length === 0);
      if (create) await this.#create();
      else await this.#delete();
      if (this.#orphans.length > 0 && random() < 0.3) await this.#deletePv(this.#orphans.shift() ?? 0);
      await Bun.sleep(paceMs);
    }
  }

  async #create(): Promise<void> {
    const id = this.created;
    this.created += 1;
    const { driverName, nodes, admin } = this.options;
    const node = nodes[id % nodes.length] ?? "";
    await this.#retrying(() => admin.create(paths.persistentVolumes, persistentVolume(`${prefix}-pv-${id}`, { driver: driverName, volumeHandle: `${prefix}-vol-${id}` })), "AlreadyExists");
    await this.#retrying(() => admin.create(paths.volumeAttachments, volumeAttachment(`${prefix}-va-${id}`, driverName, node, `${prefix}-pv-${id}`)), "AlreadyExists");
    this.#live.push(id);
  }

  async #delete(): Promise<void> {
    // Mostly the oldest (likely attached by now, so it must be detached), sometimes any (maybe mid-publish).
    const index = this.options.random() < 0.7 ? 0 : Math.floor(this.options.random() * this.#live.length);
    const [id] = this.#live.splice(index, 1);
    if (id === undefined) return;
    await this.#retrying(() => this.options.admin.delete(paths.volumeAttachment(`${prefix}-va-${id}`)), "NotFound");
    this.deletedVas += 1;
    // Half the PVs go at once, while their VA still names them: our PV finalizer must hold them.
    if (this.options.random() < 0.5) await this.#deletePv(id);
    else this.#orphans.push(id);
  }

  async #deletePv(id: number): Promise<void> {
    const path = paths.persistentVolume(`${prefix}-pv-${id}`);
    const { admin } = this.options;
    // Drop only pv-protection, conditional on the version read, so that the attacher's finalizer is never clobbered.
    await this.#retrying(async () => {
      const pv = await admin.get<KubeObject>(path);
      const finalizers = pv.metadata?.finalizers ?? [];
      if (!finalizers.includes(pvProtection)) return pv;
      return admin.patch(
        path,
        [
          { op: "test", path: "/metadata/resourceVersion", value: pv.metadata?.resourceVersion },
          { op: "replace", path: "/metadata/finalizers", value: finalizers.filter((finalizer) => finalizer !== pvProtection) },
        ],
        "json",
      );
    }, "NotFound");
    await this.#retrying(() => admin.delete(path), "NotFound");
    this.deletedPvs += 1;
  }

  /**
   * retrying repeats a request while the API server is away (connection
   * refused, 5xx, 429) or a conditional patch lost a race (409, 422 from a
   * failed `test`). `settled` names the reason that means a repeat found
   * the work already done (AlreadyExists after a create whose answer was lost).
   */
  async #retrying(request: () => Promise<unknown>, settled: string): Promise<void> {
    const deadline = performance.now() + 180_000;
    for (let attempt = 0; ; attempt++) {
      try {
        await request();
        return;
      } catch (e: unknown) {
        if (e instanceof AdminApiError && e.reason === settled && attempt > 0) return;
        if (e instanceof AdminApiError && e.reason === settled && settled === "NotFound") return;
        const transient = !(e instanceof AdminApiError) || e.status >= 500 || e.status === 429 || e.status === 409 || e.status === 422;
        if (!transient || performance.now() > deadline) throw e;
        this.retries += 1;
        await Bun.sleep(200);
      }
    }
  }
}
