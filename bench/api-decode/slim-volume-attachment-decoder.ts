/**
 * A protobuf decoder written by hand for one kind, the VolumeAttachment,
 * that reads only the fields the attacher's store keeps (the shape
 * parseVolumeAttachment returns) and skips the rest (managedFields,
 * creationTimestamp, labels, inline volume specs) without building them,
 * as the Go sidecar's generated code does not but could. protobuf-es builds
 * every field through reflection over the descriptors; this is the other end
 * of what a protobuf path could cost. Field numbers are k8s.io/api storage/v1's
 * and apimachinery meta/v1's generated.proto.
 */

const enum WireType {
  Varint = 0,
  Fixed64 = 1,
  LengthDelimited = 2,
  Fixed32 = 5,
}

const utf8 = new TextDecoder();

/** Reader walks one message's bytes: each call to `field` moves past one tag. */
class Reader {
  at: number;
  constructor(
    readonly bytes: Uint8Array,
    from: number,
    readonly end: number,
  ) {
    this.at = from;
  }

  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = this.bytes[this.at++] as number;
      // Past 2^31 multiplication keeps precision where << would not.
      result += shift < 28 ? (byte & 0x7f) << shift : (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return result;
      shift += 7;
    }
  }

  /** length returns the end of the length-delimited field that starts here, and moves past its length. */
  length(): number {
    const length = this.varint();
    return this.at + length;
  }

  string(): string {
    const end = this.length();
    const { bytes } = this;
    const from = this.at;
    this.at = end;
    for (let i = from; i < end; i++) {
      if ((bytes[i] as number) >= 0x80) return utf8.decode(bytes.subarray(from, end));
    }
    // ASCII, as nearly every name and version is: one flat string, no rope of concatenations.
    return String.fromCharCode.apply(null, bytes.subarray(from, end) as unknown as number[]);
  }

  sub(): Reader {
    const end = this.length();
    const reader = new Reader(this.bytes, this.at, end);
    this.at = end;
    return reader;
  }

  skip(wireType: number): void {
    if (wireType === WireType.Varint) this.varint();
    else if (wireType === WireType.LengthDelimited) this.at = this.length();
    else if (wireType === WireType.Fixed64) this.at += 8;
    else if (wireType === WireType.Fixed32) this.at += 4;
    else throw new Error(`wire type ${wireType} not supported`);
  }
}

interface SlimVolumeError {
  message?: string;
  time?: string;
  errorCode?: number;
}

export interface SlimVolumeAttachment {
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion: string; deletionTimestamp?: string; finalizers?: string[]; annotations?: Record<string, string> };
  spec: { attacher: string; nodeName: string; source: { persistentVolumeName?: string } };
  status?: { attached: boolean; attachmentMetadata?: Record<string, string>; attachError?: SlimVolumeError; detachError?: SlimVolumeError };
}

function time(reader: Reader): string {
  let seconds = 0;
  while (reader.at < reader.end) {
    const tag = reader.varint();
    if (tag >>> 3 === 1) seconds = reader.varint();
    else reader.skip(tag & 7);
  }
  // metav1.Time is whole seconds on the wire, as RFC 3339 in JSON.
  return new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
}

function mapEntry(reader: Reader, into: Record<string, string>): void {
  let key = "";
  let value = "";
  while (reader.at < reader.end) {
    const tag = reader.varint();
    if (tag === 10) key = reader.string();
    else if (tag === 18) value = reader.string();
    else reader.skip(tag & 7);
  }
  into[key] = value;
}

function objectMeta(reader: Reader): SlimVolumeAttachment["metadata"] {
  const meta: SlimVolumeAttachment["metadata"] = { name: "", resourceVersion: "" };
  while (reader.at < reader.end) {
    const tag = reader.varint();
    switch (tag >>> 3) {
      case 1:
        meta.name = reader.string();
        break;
      case 3: {
        // Go's generated code writes every string field, the empty namespace of a cluster-scoped object too.
        const namespace = reader.string();
        if (namespace !== "") meta.namespace = namespace;
        break;
      }
      case 5:
        meta.uid = reader.string();
        break;
      case 6:
        meta.resourceVersion = reader.string();
        break;
      case 9:
        meta.deletionTimestamp = time(reader.sub());
        break;
      case 12:
        mapEntry(reader.sub(), (meta.annotations ??= {}));
        break;
      case 14:
        (meta.finalizers ??= []).push(reader.string());
        break;
      default:
        reader.skip(tag & 7);
    }
  }
  return meta;
}

function volumeError(reader: Reader): SlimVolumeError {
  const error: SlimVolumeError = {};
  while (reader.at < reader.end) {
    const tag = reader.varint();
    const field = tag >>> 3;
    if (field === 1) error.time = time(reader.sub());
    else if (field === 2) error.message = reader.string();
    else if (field === 3) error.errorCode = reader.varint() | 0;
    else reader.skip(tag & 7);
  }
  return error;
}

function spec(reader: Reader): SlimVolumeAttachment["spec"] {
  const out: SlimVolumeAttachment["spec"] = { attacher: "", nodeName: "", source: {} };
  while (reader.at < reader.end) {
    const tag = reader.varint();
    const field = tag >>> 3;
    if (field === 1) out.attacher = reader.string();
    else if (field === 3) out.nodeName = reader.string();
    else if (field === 2) {
      const source = reader.sub();
      while (source.at < source.end) {
        const sourceTag = source.varint();
        if (sourceTag >>> 3 === 1) out.source.persistentVolumeName = source.string();
        else source.skip(sourceTag & 7);
      }
    } else reader.skip(tag & 7);
  }
  return out;
}

function status(reader: Reader): NonNullable<SlimVolumeAttachment["status"]> {
  const out: NonNullable<SlimVolumeAttachment["status"]> = { attached: false };
  while (reader.at < reader.end) {
    const tag = reader.varint();
    const field = tag >>> 3;
    if (field === 1) out.attached = reader.varint() !== 0;
    else if (field === 2) mapEntry(reader.sub(), (out.attachmentMetadata ??= {}));
    else if (field === 3) out.attachError = volumeError(reader.sub());
    else if (field === 4) out.detachError = volumeError(reader.sub());
    else reader.skip(tag & 7);
  }
  return out;
}

function volumeAttachment(reader: Reader): SlimVolumeAttachment {
  let metadata: SlimVolumeAttachment["metadata"] = { name: "", resourceVersion: "" };
  let vaSpec: SlimVolumeAttachment["spec"] = { attacher: "", nodeName: "", source: {} };
  let vaStatus: SlimVolumeAttachment["status"];
  while (reader.at < reader.end) {
    const tag = reader.varint();
    const field = tag >>> 3;
    if (field === 1) metadata = objectMeta(reader.sub());
    else if (field === 2) vaSpec = spec(reader.sub());
    else if (field === 3) vaStatus = status(reader.sub());
    else reader.skip(tag & 7);
  }
  return vaStatus ? { metadata, spec: vaSpec, status: vaStatus } : { metadata, spec: vaSpec };
}

/** unknownRaw returns the reader over runtime.Unknown's `raw` (field 2) in a body past the k8s\0 magic. */
function unknownRaw(body: Uint8Array, from: number, end: number): Reader {
  const unknown = new Reader(body, from + 4, end);
  while (unknown.at < unknown.end) {
    const tag = unknown.varint();
    if (tag >>> 3 === 2) return unknown.sub();
    unknown.skip(tag & 7);
  }
  throw new Error("runtime.Unknown without raw");
}

/** slimVolumeAttachmentPage decodes a VolumeAttachmentList body's items and its continue token. */
export function slimVolumeAttachmentPage(body: Uint8Array): { items: SlimVolumeAttachment[]; continueToken: string } {
  const list = unknownRaw(body, 0, body.length);
  const items: SlimVolumeAttachment[] = [];
  let continueToken = "";
  while (list.at < list.end) {
    const tag = list.varint();
    const field = tag >>> 3;
    if (field === 2) items.push(volumeAttachment(list.sub()));
    else if (field === 1) {
      const meta = list.sub();
      while (meta.at < meta.end) {
        const metaTag = meta.varint();
        if (metaTag >>> 3 === 3) continueToken = meta.string();
        else meta.skip(metaTag & 7);
      }
    } else list.skip(tag & 7);
  }
  return { items, continueToken };
}

/** slimVolumeAttachmentEvent decodes one watch frame (a meta.v1.WatchEvent) into its VA. */
export function slimVolumeAttachmentEvent(frame: Uint8Array): SlimVolumeAttachment {
  const event = new Reader(frame, 0, frame.length);
  while (event.at < event.end) {
    const tag = event.varint();
    if (tag >>> 3 === 2) {
      // object: a RawExtension whose raw (field 1) is magic plus Unknown.
      const extension = event.sub();
      while (extension.at < extension.end) {
        const extensionTag = extension.varint();
        if (extensionTag >>> 3 === 1) {
          const end = extension.length();
          return volumeAttachment(unknownRaw(frame, extension.at, end));
        }
        extension.skip(extensionTag & 7);
      }
    } else event.skip(tag & 7);
  }
  throw new Error("watch event without an object");
}
