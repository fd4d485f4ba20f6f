// The fake driver's storage back end: which volumes exist and which nodes
// each is published to. In memory only; a killed driver forgets everything,
// like a real back end that lost its state, which tests may rely on.

/** DEFAULT_CAPACITY_BYTES is the size of a volume nobody gave a size: 1 GiB. */
export const DEFAULT_CAPACITY_BYTES = 1n << 30n;

/** VolumeView is a snapshot of one volume, safe to hand out. */
export interface VolumeView {
  readonly volumeId: string;
  readonly capacityBytes: bigint;
  readonly parameters: Readonly<Record<string, string>>;
  /** Nodes the volume is published to, in publication order. */
  readonly nodeIds: readonly string[];
}

/** VolumePage is one page of ListVolumes. */
export interface VolumePage {
  readonly volumes: readonly VolumeView[];
  /** Offset of the next page, or undefined when this page is the last. */
  readonly nextOffset: number | undefined;
}

interface VolumeEntry {
  readonly volumeId: string;
  readonly capacityBytes: bigint;
  readonly parameters: Readonly<Record<string, string>>;
  readonly nodeIds: Set<string>;
}

/**
 * VolumeTable is the fake driver's record of volumes and publications.
 * ControllerPublishVolume and ControllerUnpublishVolume change it,
 * ListVolumes pages through it, and GET /published shows it to tests.
 */
export class VolumeTable {
  /**
   * Volumes by id. Map iteration order is insertion order, and that is the
   * ListVolumes order, so a page offset keeps meaning the same volume as
   * long as nothing before it is deleted (the CSI spec lets a driver answer
   * ABORTED when a token went stale; we only check it is in range).
   */
  readonly #volumes = new Map<string, VolumeEntry>();

  /** has tells whether a volume exists. */
  has(volumeId: string): boolean {
    return this.#volumes.has(volumeId);
  }

  /** get returns a snapshot of a volume, or undefined if it does not exist. */
  get(volumeId: string): VolumeView | undefined {
    const entry = this.#volumes.get(volumeId);
    return entry === undefined ? undefined : view(entry);
  }

  /**
   * create adds a volume unless it exists, and returns it either way,
   * because CreateVolume is idempotent on the volume name.
   */
  create(volumeId: string, capacityBytes = DEFAULT_CAPACITY_BYTES, parameters: Record<string, string> = {}): VolumeView {
    return view(this.#entry(volumeId, capacityBytes, parameters));
  }

  /** delete removes a volume with its publications; deleting a missing volume is fine. */
  delete(volumeId: string): void {
    this.#volumes.delete(volumeId);
  }

  /**
   * publish records that a volume is published to a node, creating the
   * volume if needed (the caller decides whether that is allowed).
   */
  publish(volumeId: string, nodeId: string): void {
    this.#entry(volumeId).nodeIds.add(nodeId);
  }

  /** unpublish forgets a publication; forgetting one that is not there is fine. */
  unpublish(volumeId: string, nodeId: string): void {
    this.#volumes.get(volumeId)?.nodeIds.delete(nodeId);
  }

  /**
   * page returns up to `maxEntries` volumes from `offset` (0 = no limit).
   * The caller must check the offset with isValidOffset first.
   */
  page(offset: number, maxEntries: number): VolumePage {
    const size = this.#volumes.size;
    const end = maxEntries > 0 ? Math.min(offset + maxEntries, size) : size;
    // Walk to the page without copying the whole table: at 100,000
    // volumes a copy per page made one listing quadratic.
    const volumes: VolumeView[] = [];
    let index = 0;
    for (const entry of this.#volumes.values()) {
      if (index >= end) break;
      if (index >= offset) volumes.push(view(entry));
      index++;
    }
    return { volumes, nextOffset: end < size ? end : undefined };
  }

  /** isValidOffset tells whether a page may start at `offset`. */
  isValidOffset(offset: number): boolean {
    return Number.isInteger(offset) && offset >= 0 && offset <= this.#volumes.size;
  }

  /** published maps every volume to the nodes it is published to, volumes with none included. */
  published(): Record<string, string[]> {
    const result: Record<string, string[]> = {};
    for (const entry of this.#volumes.values()) {
      result[entry.volumeId] = [...entry.nodeIds];
    }
    return result;
  }

  /** clear forgets every volume, for POST /reset. */
  clear(): void {
    this.#volumes.clear();
  }

  #entry(volumeId: string, capacityBytes = DEFAULT_CAPACITY_BYTES, parameters: Record<string, string> = {}): VolumeEntry {
    let entry = this.#volumes.get(volumeId);
    if (entry === undefined) {
      entry = { volumeId, capacityBytes, parameters: { ...parameters }, nodeIds: new Set() };
      this.#volumes.set(volumeId, entry);
    }
    return entry;
  }
}

function view(entry: VolumeEntry): VolumeView {
  return {
    volumeId: entry.volumeId,
    capacityBytes: entry.capacityBytes,
    parameters: { ...entry.parameters },
    nodeIds: [...entry.nodeIds],
  };
}
