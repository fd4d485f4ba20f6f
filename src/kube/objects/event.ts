import type { ObjectMeta } from "./object-meta";

/** ObjectReference is core/v1 ObjectReference as an Event's involvedObject carries it. */
export interface ObjectReference {
  readonly kind: string;
  readonly apiVersion: string;
  readonly name: string;
  /** "" for cluster-scoped objects such as VolumeAttachments. */
  readonly namespace: string;
  readonly uid: string;
  readonly resourceVersion: string;
}

/** EventType is core/v1 Event.type: only these two exist. */
export type EventType = "Normal" | "Warning";

/**
 * CoreEvent is the core/v1 Event the recorder writes — the API
 * `kubectl describe` reads events from (it lists core/v1 events by
 * involvedObject). Timestamps are metav1.Time: RFC 3339, whole seconds.
 */
export interface CoreEvent {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion?: string };
  readonly involvedObject: ObjectReference;
  readonly reason: string;
  readonly message: string;
  readonly type: EventType;
  readonly source: { readonly component: string; readonly host: string };
  readonly reportingComponent: string;
  readonly reportingInstance: string;
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly count: number;
}

/** eventsPath is the core/v1 events collection of `namespace`. */
export function eventsPath(namespace: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
}

/** eventPath is one event's path. */
export function eventPath(namespace: string, name: string): string {
  return `${eventsPath(namespace)}/${encodeURIComponent(name)}`;
}

/** formatKubeTime renders a metav1.Time: RFC 3339 in UTC, whole seconds (`2006-01-02T15:04:05Z`). */
export function formatKubeTime(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(0, 19)}Z`;
}

/** objectReference builds an involvedObject from an object's kind, API version and slim metadata. */
export function objectReference(kind: string, apiVersion: string, metadata: ObjectMeta): ObjectReference {
  return {
    kind,
    apiVersion,
    name: metadata.name,
    namespace: metadata.namespace ?? "",
    uid: metadata.uid ?? "",
    resourceVersion: metadata.resourceVersion,
  };
}

/** volumeAttachmentReference is the involvedObject of an event about a VolumeAttachment. */
export function volumeAttachmentReference(metadata: ObjectMeta): ObjectReference {
  return objectReference("VolumeAttachment", "storage.k8s.io/v1", metadata);
}

/**
 * eventNamer returns a function naming new events the way client-go does,
 * `<object name>.<timestamp in ns, hex>`. JavaScript clocks give
 * milliseconds, so a counter fills the nanoseconds: two events about one
 * object in the same millisecond still get different names.
 */
export function eventNamer(now: () => number): (objectName: string) => string {
  let sequence = 0;
  return (objectName) => {
    sequence = (sequence + 1) % 1_000_000;
    const nanoseconds = BigInt(Math.floor(now())) * 1_000_000n + BigInt(sequence);
    return `${objectName}.${nanoseconds.toString(16)}`;
  };
}
