/**
 * The recorded answers of kube-apiserver (record.ts writes them, decode.ts
 * reads them) and the two ways of decoding them: JSON.parse, as the
 * attacher does today, and protobuf-es over the types generated from
 * k8s.io/api's generated.proto (gen/, `npx buf generate` in this folder).
 *
 * Kubernetes' protobuf answers are not bare messages: a body is the magic
 * "k8s\0" and a runtime.Unknown whose `raw` holds the object's message. A
 * protobuf watch is a stream of frames, each a 4-byte big-endian length and
 * a meta.v1.WatchEvent whose `object.raw` is again magic plus Unknown.
 */
import { fromBinary, type DescMessage } from "@bufbuild/protobuf";
import { CSINodeListSchema, CSINodeSchema, VolumeAttachmentListSchema, VolumeAttachmentSchema } from "./gen/k8s.io/api/storage/v1/generated_pb";
import { PersistentVolumeListSchema, PersistentVolumeSchema } from "./gen/k8s.io/api/core/v1/generated_pb";
import { WatchEventSchema } from "./gen/k8s.io/apimachinery/pkg/apis/meta/v1/generated_pb";
import { UnknownSchema } from "./gen/k8s.io/apimachinery/pkg/runtime/generated_pb";
import { slimVolumeAttachmentEvent, slimVolumeAttachmentPage } from "./slim-volume-attachment-decoder";
import { parseCsiNode } from "../../src/kube/objects/csi-node";
import { parsePersistentVolume } from "../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment } from "../../src/kube/objects/volume-attachment";

export const kinds = ["va", "pv", "csinode"] as const;
export type Kind = (typeof kinds)[number];
export const encodings = ["json", "protobuf"] as const;
export type Encoding = (typeof encodings)[number];

export const listPagesFile = (kind: Kind, encoding: Encoding) => `${kind}-list.${encoding}`;
export const watchFile = (kind: Kind, encoding: Encoding) => `${kind}-watch.${encoding}`;

const listSchemas: Record<Kind, DescMessage> = { va: VolumeAttachmentListSchema, pv: PersistentVolumeListSchema, csinode: CSINodeListSchema };
const objectSchemas: Record<Kind, DescMessage> = { va: VolumeAttachmentSchema, pv: PersistentVolumeSchema, csinode: CSINodeSchema };

const magic = [0x6b, 0x38, 0x73, 0x00];

/** unwrap returns the message inside a Kubernetes protobuf body: past the magic, the Unknown's `raw`. */
function unwrap(body: Uint8Array): Uint8Array {
  if (!magic.every((byte, i) => body[i] === byte)) throw new Error("not a Kubernetes protobuf body (no k8s\\0 magic)");
  return fromBinary(UnknownSchema, body.subarray(magic.length)).raw;
}

/** frames splits a file of 4-byte big-endian lengths, each followed by that many bytes (the first `limit` of them). */
export function frames(file: Uint8Array, limit = Infinity): Uint8Array[] {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const out: Uint8Array[] = [];
  for (let at = 0; at < file.length && out.length < limit; ) {
    const length = view.getUint32(at);
    out.push(file.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return out;
}

/** A decoded list page: its items, and the token of the next page. */
export interface DecodedPage {
  readonly items: readonly unknown[];
  readonly continueToken: string;
}

const utf8 = new TextDecoder();

export const decodePage: Record<Encoding, (kind: Kind, body: Uint8Array) => DecodedPage> = {
  json(_kind, body) {
    const page = JSON.parse(utf8.decode(body)) as { items?: unknown[]; metadata?: { continue?: string } };
    return { items: page.items ?? [], continueToken: page.metadata?.continue ?? "" };
  },
  protobuf(kind, body) {
    const list = fromBinary(listSchemas[kind], unwrap(body)) as unknown as { items: unknown[]; metadata?: { continue: string } };
    return { items: list.items, continueToken: list.metadata?.continue ?? "" };
  },
};

/** decodeWatch decodes the first `limit` events of a recorded watch stream into their objects. */
export const decodeWatch: Record<Encoding, (kind: Kind, stream: Uint8Array, limit: number) => unknown[]> = {
  json(_kind, stream, limit) {
    // As the client reads it: text (only as far as the last event asked for), split at newlines, one JSON.parse per event.
    let end = 0;
    for (let events = 0; events < limit && end < stream.length; events++) {
      const newline = stream.indexOf(10, end);
      end = newline === -1 ? stream.length : newline + 1;
    }
    const objects: unknown[] = [];
    for (const line of utf8.decode(stream.subarray(0, end)).split("\n")) {
      if (line !== "") objects.push((JSON.parse(line) as { object: unknown }).object);
    }
    return objects;
  },
  protobuf(kind, stream, limit) {
    const objects: unknown[] = [];
    for (const frame of frames(stream, limit)) {
      const event = fromBinary(WatchEventSchema, frame);
      objects.push(fromBinary(objectSchemas[kind], unwrap(event.object?.raw ?? new Uint8Array())));
    }
    return objects;
  },
};

/**
 * A way of turning recorded bytes into objects: `page` decodes one list page,
 * `watch` the first `limit` events of a stream. `kinds` are those it knows.
 */
export interface Decoder {
  readonly encoding: Encoding;
  readonly kinds: readonly Kind[];
  readonly page: (kind: Kind, body: Uint8Array) => readonly unknown[];
  readonly watch: (kind: Kind, stream: Uint8Array, limit: number) => unknown[];
}

const valibotParsers: Record<Kind, (raw: unknown) => unknown> = { va: parseVolumeAttachment, pv: parsePersistentVolume, csinode: parseCsiNode };

export const decoders = {
  /** JSON.parse alone. */
  json: { encoding: "json", kinds, page: (kind, body) => decodePage.json(kind, body).items, watch: decodeWatch.json },
  /** JSON.parse, then valibot into the slim object the store keeps: the attacher's work per object today. */
  "json+valibot": {
    encoding: "json",
    kinds,
    page: (kind, body) => decodePage.json(kind, body).items.map(valibotParsers[kind]),
    watch: (kind, stream, limit) => decodeWatch.json(kind, stream, limit).map(valibotParsers[kind]),
  },
  /** protobuf-es's fromBinary over the generated types: every field, through reflection. */
  "protobuf-es": { encoding: "protobuf", kinds, page: (kind, body) => decodePage.protobuf(kind, body).items, watch: decodeWatch.protobuf },
  /** The hand-written VA decoder: only the fields the store keeps. */
  "protobuf-slim": {
    encoding: "protobuf",
    kinds: ["va"],
    page: (_kind, body) => slimVolumeAttachmentPage(body).items,
    watch: (_kind, stream, limit) => frames(stream, limit).map(slimVolumeAttachmentEvent),
  },
} satisfies Record<string, Decoder>;

export type DecoderName = keyof typeof decoders;
