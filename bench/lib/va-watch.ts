/**
 * VaWatch records, for every VolumeAttachment, when the benchmark saw it
 * become attached and when it disappeared, from one watch on the apiserver.
 * A watch instead of polling: listing 1,000 VAs every 100 ms would load the
 * apiserver the attachers share and blur what is measured.
 */
import type { AdminClientOptions } from "../../test/ground/admin-client";

const vaPath = "/apis/storage.k8s.io/v1/volumeattachments";

interface WatchedVa {
  readonly metadata: { readonly name: string; readonly resourceVersion?: string };
  readonly status?: { readonly attached?: boolean };
}

/** ChunkReader is the part of a body stream's reader used here (Bun's and Node's typings of it differ). */
interface ChunkReader {
  read(): Promise<{ done: boolean; value?: unknown }>;
  cancel(): Promise<void>;
}

interface WatchEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  readonly object: WatchedVa;
}

/** WatchExpired: the watch's resourceVersion is gone (410); the watch lists again. */
class WatchExpired extends Error {
  override name = "WatchExpired";
}

/** VaWatch is a running watch; times are performance.now() milliseconds. */
export class VaWatch {
  /** First time each VA was seen (its ADDED event, for one created while watched). */
  readonly addedAt = new Map<string, number>();
  /** First time each VA was seen with status.attached true. */
  readonly attachedAt = new Map<string, number>();
  /** Time each VA's DELETED event arrived. */
  readonly goneAt = new Map<string, number>();
  /** VAs that exist now. */
  readonly present = new Set<string>();
  #resourceVersion = "";
  #reader: ChunkReader | undefined;
  #stopped = false;
  #loop: Promise<void> | undefined;
  readonly #options: AdminClientOptions;

  private constructor(options: AdminClientOptions) {
    this.#options = options;
  }

  /** start lists the VAs that exist, then watches from there. */
  static async start(options: AdminClientOptions): Promise<VaWatch> {
    const watch = new VaWatch(options);
    await watch.#list();
    watch.#loop = watch.#watchLoop();
    return watch;
  }

  /**
   * #list reads every VA in pages of 500 (a scale run has 100,000) and
   * makes `present` what the list says: a VA missing from it was deleted
   * while no watch ran (after a 410 Gone), and counts as gone now.
   */
  async #list(): Promise<void> {
    const listed = new Set<string>();
    let token = "";
    let resourceVersion = "";
    do {
      const res = await this.#fetch(`${vaPath}?limit=500${token === "" ? "" : `&continue=${encodeURIComponent(token)}`}`);
      const page = (await res.json()) as { metadata: { resourceVersion: string; continue?: string }; items: WatchedVa[] };
      const now = performance.now();
      for (const va of page.items) {
        listed.add(va.metadata.name);
        this.#apply("ADDED", va, now);
      }
      token = page.metadata.continue ?? "";
      resourceVersion = page.metadata.resourceVersion;
    } while (token !== "");
    const now = performance.now();
    for (const name of [...this.present]) {
      if (listed.has(name)) continue;
      this.present.delete(name);
      this.goneAt.set(name, now);
    }
    this.#resourceVersion = resourceVersion;
  }

  /** forget clears the recorded times (not the set of present VAs) before a new measurement. */
  forget(): void {
    this.addedAt.clear();
    this.attachedAt.clear();
    this.goneAt.clear();
  }

  /** attachedCount counts the present VAs among `names` seen attached. */
  countAttached(names: readonly string[]): number {
    let n = 0;
    for (const name of names) if (this.attachedAt.has(name)) n++;
    return n;
  }

  /** countGone counts `names` that no longer exist. */
  countGone(names: readonly string[]): number {
    let n = 0;
    for (const name of names) if (!this.present.has(name)) n++;
    return n;
  }

  /** stop ends the watch (cancelling the body stream, which frees it in Bun, unlike an abort). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#reader?.cancel();
    await this.#loop;
  }

  async #watchLoop(): Promise<void> {
    while (!this.#stopped) {
      try {
        const res = await this.#fetch(`${vaPath}?watch=1&allowWatchBookmarks=true&timeoutSeconds=3600&resourceVersion=${this.#resourceVersion}`);
        const body = res.body;
        if (body === null) throw new Error("watch answered without a body");
        const reader = body.getReader();
        this.#reader = reader;
        await this.#readEvents(reader);
      } catch (e: unknown) {
        if (this.#stopped) return;
        // A dropped watch resumes from the last resourceVersion; once that
        // was compacted away (the scale scenario's 410 Gone), only a fresh
        // list tells what changed.
        const expired = e instanceof WatchExpired;
        if (!expired) process.stderr.write(`[bench] VA watch restarting: ${e instanceof Error ? e.message : String(e)}\n`);
        await Bun.sleep(200);
        if (expired) await this.#list().catch((listError: unknown) => {
          process.stderr.write(`[bench] VA relist failed: ${listError instanceof Error ? listError.message : String(listError)}\n`);
        });
      }
    }
  }

  async #readEvents(reader: ChunkReader): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const now = performance.now();
      buffered += decoder.decode(value as Uint8Array, { stream: true });
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim() !== "") {
          const event = JSON.parse(line) as WatchEvent;
          if (event.type === "ERROR") {
            if ((event.object as { code?: number }).code === 410) throw new WatchExpired(line);
            throw new Error(`watch error: ${line}`);
          }
          this.#apply(event.type, event.object, now);
        }
        newline = buffered.indexOf("\n");
      }
    }
  }

  #apply(type: WatchEvent["type"], va: WatchedVa, now: number): void {
    if (va.metadata.resourceVersion !== undefined) this.#resourceVersion = va.metadata.resourceVersion;
    if (type === "BOOKMARK") return;
    const name = va.metadata.name;
    if (type === "DELETED") {
      this.present.delete(name);
      this.goneAt.set(name, now);
      return;
    }
    this.present.add(name);
    if (!this.addedAt.has(name)) this.addedAt.set(name, now);
    if (va.status?.attached === true && !this.attachedAt.has(name)) this.attachedAt.set(name, now);
  }

  #fetch(path: string): Promise<Response> {
    return fetch(`${this.#options.server}${path}`, {
      headers: { Authorization: `Bearer ${this.#options.adminToken}`, Accept: "application/json" },
      tls: { ca: this.#options.caPem },
    }).then((res) => {
      if (res.status === 410) throw new WatchExpired(`GET ${path}: 410`);
      if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
      return res;
    });
  }
}
