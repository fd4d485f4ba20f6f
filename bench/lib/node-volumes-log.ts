/**
 * NodeVolumesLog records when each volume appeared in, and then left, a
 * Node's `status.volumesAttached`: the moment the attach/detach controller
 * tells the kubelet a volume may be mounted, which is what a Pod waits for.
 * It reads the Nodes by polling: the benchmark's clusters have four, and
 * the controller itself only looks at VolumeAttachments every 0.5 s or more,
 * so a 50 ms poll of one small list neither loads the apiserver nor blurs
 * the measure.
 */
import type { AdminClient } from "../../test/ground/admin-client";
import { podPaths, volumesAttachedTo, type NodeJson } from "../../test/ground/pod-objects";

/** attachmentKey names one volume on one node. */
export const attachmentKey = (node: string, volumeName: string): string => `${node}|${volumeName}`;

export class NodeVolumesLog {
  /** First time each node|volume was seen listed; times are performance.now() ms. */
  readonly appearedAt = new Map<string, number>();
  /** First time each listed node|volume was seen no longer listed. */
  readonly leftAt = new Map<string, number>();
  /** node|volume pairs listed at the last reading. */
  readonly #listed = new Set<string>();

  /** forget clears the recorded times (not what is listed now) before a new measurement. */
  forget(): void {
    this.appearedAt.clear();
    this.leftAt.clear();
  }

  /** record takes one reading of every Node, made at `now`. */
  record(nodes: readonly NodeJson[], now: number): void {
    const listed = new Set(nodes.flatMap((node) => volumesAttachedTo(node).map((volume) => attachmentKey(node.metadata.name, volume))));
    for (const key of listed) {
      if (!this.#listed.has(key) && !this.appearedAt.has(key)) this.appearedAt.set(key, now);
    }
    for (const key of this.#listed) {
      if (!listed.has(key) && !this.leftAt.has(key)) this.leftAt.set(key, now);
    }
    this.#listed.clear();
    for (const key of listed) this.#listed.add(key);
  }

  /** isListed says whether `key` was listed at the last reading. */
  isListed(key: string): boolean {
    return this.#listed.has(key);
  }

  /** poll reads the Nodes once. */
  async poll(admin: AdminClient): Promise<void> {
    const list = await admin.list<NodeJson>(podPaths.nodes);
    this.record(list.items, performance.now());
  }
}
