/**
 * EtcdHistory records every change to VolumeAttachments and PVs straight
 * from etcd's watch, in revision order. It is the chaos suite's witness:
 * independent of kube-apiserver (which the suite kills) and of any client
 * watch (which compaction breaks), an etcd watch that started before the
 * first object and stays caught up sees every revision exactly once.
 * The apiserver must store JSON (`--storage-media-type=application/json`)
 * so that the values can be read here.
 */

/** One change to one object, as etcd committed it. */
export interface ObjectChange {
  /** etcd revision: one total order over every kind. */
  readonly revision: number;
  readonly kind: "VolumeAttachment" | "PersistentVolume";
  readonly name: string;
  /** The object after the change; null when it was deleted. */
  readonly object: StoredObject | null;
  /** When this process received the change: a little after etcd committed it. */
  readonly receivedAtMs: number;
}

/** The fields of a stored VA or PV the invariants read. */
export interface StoredObject {
  readonly metadata: { readonly name: string; readonly finalizers?: readonly string[]; readonly deletionTimestamp?: string };
  readonly spec?: {
    readonly attacher?: string;
    readonly nodeName?: string;
    readonly source?: { readonly persistentVolumeName?: string };
    readonly csi?: { readonly volumeHandle?: string };
  };
  readonly status?: { readonly attached?: boolean };
}

const prefixes = { "/registry/volumeattachments/": "VolumeAttachment", "/registry/persistentvolumes/": "PersistentVolume" } as const;

interface WatchLine {
  result?: {
    created?: boolean;
    canceled?: boolean;
    cancel_reason?: string;
    events?: { type?: "PUT" | "DELETE"; kv: { key: string; mod_revision: string; value?: string } }[];
  };
}

export class EtcdHistory {
  readonly changes: ObjectChange[] = [];
  readonly #abort = new AbortController();
  #done: Promise<void> | undefined;
  #failure: unknown;

  constructor(private readonly etcdUrl: string) {}

  /** start opens the watch from the current revision; resolves once etcd confirmed it. */
  async start(): Promise<void> {
    const range = await fetch(`${this.etcdUrl}/v3/kv/range`, { method: "POST", body: JSON.stringify({ key: btoa("/registry/"), count_only: true }) });
    const revision = Number(((await range.json()) as { header: { revision: string } }).header.revision);
    const response = await fetch(`${this.etcdUrl}/v3/watch`, {
      method: "POST",
      // Everything under /registry/: filtered here to our two kinds.
      body: JSON.stringify({ create_request: { key: btoa("/registry/"), range_end: btoa("/registry0"), start_revision: revision + 1 } }),
      signal: this.#abort.signal,
    });
    if (!response.ok || response.body === null) throw new Error(`etcd watch failed: HTTP ${response.status}`);
    let confirmed!: () => void;
    const created = new Promise<void>((resolve) => (confirmed = resolve));
    this.#done = this.#read(response.body, confirmed).catch((e: unknown) => {
      if (!this.#abort.signal.aborted) this.#failure = e;
    });
    await Promise.race([created, this.#done.then(() => Promise.reject(new Error(`etcd watch ended before it started: ${String(this.#failure)}`)))]);
  }

  /** stop ends the watch; throws if it had failed, since a history with a gap proves nothing. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
    if (this.#failure !== undefined) throw new Error(`the etcd history has a gap: ${String(this.#failure)}`);
  }

  /** lastRevision is the newest revision recorded (0 before any change). */
  get lastRevision(): number {
    return this.changes[this.changes.length - 1]?.revision ?? 0;
  }

  async #read(body: ReadableStream<Uint8Array>, confirmed: () => void): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of body) {
      buffered += decoder.decode(chunk, { stream: true });
      let newline = buffered.indexOf("\n");
      while (newline !== -1) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line !== "") this.#apply(JSON.parse(line) as WatchLine, confirmed);
        newline = buffered.indexOf("\n");
      }
    }
    throw new Error("etcd closed the watch");
  }

  #apply(line: WatchLine, confirmed: () => void): void {
    const result = line.result;
    if (result?.created) confirmed();
    if (result?.canceled) throw new Error(`etcd cancelled the watch: ${result.cancel_reason ?? "no reason"}`);
    const receivedAtMs = Date.now();
    for (const event of result?.events ?? []) {
      const key = Buffer.from(event.kv.key, "base64").toString("utf8");
      for (const [prefix, kind] of Object.entries(prefixes)) {
        if (!key.startsWith(prefix)) continue;
        const object = event.type === "DELETE" || event.kv.value === undefined ? null : (JSON.parse(Buffer.from(event.kv.value, "base64").toString("utf8")) as StoredObject);
        this.changes.push({ revision: Number(event.kv.mod_revision), kind, name: key.slice(prefix.length), object, receivedAtMs });
      }
    }
  }
}
