/**
 * decodeFileDescriptorProto reads the FileDescriptorProto that protoc-gen-es
 * embeds in a generated file (base64 in its `fileDesc` call) into the shape
 * protobuf-es's registry builds descriptors from, without protobuf-es's own
 * reader for it. That reader is reflection over descriptor.proto's
 * descriptors, which the library must first build, ~30 messages and ~200
 * fields that nothing else in the attacher uses: measured, that boot is
 * ~3 ms of every start and ~0.6 MB of heap that stays live.
 *
 * It reads what the registry reads, as protobuf-es's decoder would leave it:
 * a field set on the wire is an own property, and an unset one falls back
 * to its default through the prototype (the registry asks "was it set?" of
 * `oneofIndex`, `defaultValue`, `jsonName` and `packed`). A JSON name the
 * embedding stripped is restored from the field's name, as the library's
 * `fileDesc` does.
 *
 * What would change a descriptor and is not read here (extensions, edition
 * features, custom options) makes it throw, naming the file and the field:
 * a descriptor is read whole or not at all. Options for other languages'
 * code generators (go_package, java_*) are skipped: no descriptor depends
 * on them. test/unit/protobuf/file-descriptor-proto-decoder.test.ts holds every
 * generated file's decoding to the library's own.
 */
import { protoCamelCase } from "@bufbuild/protobuf/reflect";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import type { DescriptorProto, FieldDescriptorProto, FileDescriptorProto } from "@bufbuild/protobuf/wkt";

type Decoded = Record<string, unknown>;

/** Where the decoder is, for its errors: the file's name once its first field is read. */
interface Where {
  file: string;
}

/** How one field of a descriptor message is read into its object. */
type FieldReader = (reader: BinaryReader, into: Decoded, where: Where) => void;

/** DescriptorKind is one message of descriptor.proto as decoded here. */
interface DescriptorKind {
  readonly typeName: string;
  /** Implicit defaults, reached through the prototype so that they do not count as set. */
  readonly defaults: Readonly<Decoded>;
  /** Repeated fields, which start empty on every object. */
  readonly repeated: readonly string[];
  readonly fields: ReadonlyMap<number, FieldReader>;
  /** Field numbers read past without a trace: options for other languages' code generators. */
  readonly skipped?: (fieldNumber: number) => boolean;
}

function scalar(name: string, read: (reader: BinaryReader) => unknown): FieldReader {
  return (reader, into) => {
    into[name] = read(reader);
  };
}

function message(name: string, kind: () => DescriptorKind): FieldReader {
  return (reader, into, where) => {
    into[name] = decode(kind(), reader.bytes(), where);
  };
}

function repeatedMessage(name: string, kind: () => DescriptorKind): FieldReader {
  return (reader, into, where) => {
    (into[name] as Decoded[]).push(decode(kind(), reader.bytes(), where));
  };
}

const string = (reader: BinaryReader): string => reader.string();
const int32 = (reader: BinaryReader): number => reader.int32();
const bool = (reader: BinaryReader): boolean => reader.bool();

/** Custom options are extensions, numbered from 1000; 999 is uninterpreted_option, which a compiler never leaves in. */
const isExtensionOrUninterpreted = (fieldNumber: number): boolean => fieldNumber >= 999;

/**
 * optionsKind reads the options the registry reads (`deprecated`, and per kind
 * `map_entry`, `packed`, `jstype`, `idempotency_level`) and refuses edition
 * features and custom options; every other option only guides code
 * generators and is skipped.
 */
function optionsKind(typeName: string, featuresNumber: number, read: Readonly<Record<number, readonly [string, (reader: BinaryReader) => unknown, unknown]>>, repeated: readonly string[] = ["uninterpretedOption"]): DescriptorKind {
  const defaults: Decoded = {};
  const fields = new Map<number, FieldReader>();
  for (const [fieldNumber, [name, decodeValue, defaultValue]] of Object.entries(read)) {
    defaults[name] = defaultValue;
    fields.set(Number(fieldNumber), scalar(name, decodeValue));
  }
  return {
    typeName,
    defaults,
    repeated,
    fields,
    skipped: (fieldNumber) => fieldNumber !== featuresNumber && !isExtensionOrUninterpreted(fieldNumber),
  };
}

const fileOptions = optionsKind("google.protobuf.FileOptions", 50, { 23: ["deprecated", bool, false] });
const messageOptions = optionsKind("google.protobuf.MessageOptions", 12, { 3: ["deprecated", bool, false], 7: ["mapEntry", bool, false] });
const fieldOptions = optionsKind("google.protobuf.FieldOptions", 21, { 2: ["packed", bool, false], 3: ["deprecated", bool, false], 6: ["jstype", int32, 0] }, ["targets", "editionDefaults", "uninterpretedOption"]);
const oneofOptions = optionsKind("google.protobuf.OneofOptions", 1, {});
const enumOptions = optionsKind("google.protobuf.EnumOptions", 7, { 3: ["deprecated", bool, false] });
const enumValueOptions = optionsKind("google.protobuf.EnumValueOptions", 2, { 1: ["deprecated", bool, false] });
const serviceOptions = optionsKind("google.protobuf.ServiceOptions", 34, { 33: ["deprecated", bool, false] });
const methodOptions = optionsKind("google.protobuf.MethodOptions", 35, { 33: ["deprecated", bool, false], 34: ["idempotencyLevel", int32, 0] });

const fieldKind: DescriptorKind = {
  typeName: "google.protobuf.FieldDescriptorProto",
  defaults: { name: "", number: 0, label: 1, type: 1, typeName: "", extendee: "", defaultValue: "", oneofIndex: 0, jsonName: "", proto3Optional: false },
  repeated: [],
  fields: new Map([
    [1, scalar("name", string)],
    [3, scalar("number", int32)],
    [4, scalar("label", int32)],
    [5, scalar("type", int32)],
    [6, scalar("typeName", string)],
    [7, scalar("defaultValue", string)],
    [8, message("options", () => fieldOptions)],
    [9, scalar("oneofIndex", int32)],
    [10, scalar("jsonName", string)],
    [17, scalar("proto3Optional", bool)],
  ]),
};

const oneofKind: DescriptorKind = {
  typeName: "google.protobuf.OneofDescriptorProto",
  defaults: { name: "" },
  repeated: [],
  fields: new Map([
    [1, scalar("name", string)],
    [2, message("options", () => oneofOptions)],
  ]),
};

const enumValueKind: DescriptorKind = {
  typeName: "google.protobuf.EnumValueDescriptorProto",
  defaults: { name: "", number: 0 },
  repeated: [],
  fields: new Map([
    [1, scalar("name", string)],
    [2, scalar("number", int32)],
    [3, message("options", () => enumValueOptions)],
  ]),
};

/** A reserved range of field or enum numbers: `start` and `end` in both kinds, read so the descriptor is whole. */
function reservedRangeKind(typeName: string): DescriptorKind {
  return {
    typeName,
    defaults: { start: 0, end: 0 },
    repeated: [],
    fields: new Map([
      [1, scalar("start", int32)],
      [2, scalar("end", int32)],
    ]),
  };
}
const messageReservedRange = reservedRangeKind("google.protobuf.DescriptorProto.ReservedRange");
const enumReservedRange = reservedRangeKind("google.protobuf.EnumDescriptorProto.EnumReservedRange");

function repeatedString(name: string): FieldReader {
  return (reader, into) => {
    (into[name] as string[]).push(reader.string());
  };
}

const enumKind: DescriptorKind = {
  typeName: "google.protobuf.EnumDescriptorProto",
  defaults: { name: "", visibility: 0 },
  repeated: ["value", "reservedRange", "reservedName"],
  fields: new Map([
    [1, scalar("name", string)],
    [2, repeatedMessage("value", () => enumValueKind)],
    [3, message("options", () => enumOptions)],
    [4, repeatedMessage("reservedRange", () => enumReservedRange)],
    [5, repeatedString("reservedName")],
  ]),
};

const messageKind: DescriptorKind = {
  typeName: "google.protobuf.DescriptorProto",
  defaults: { name: "", visibility: 0 },
  repeated: ["field", "extension", "nestedType", "enumType", "extensionRange", "oneofDecl", "reservedRange", "reservedName"],
  fields: new Map([
    [1, scalar("name", string)],
    [2, repeatedMessage("field", () => fieldKind)],
    [3, repeatedMessage("nestedType", () => messageKind)],
    [4, repeatedMessage("enumType", () => enumKind)],
    [7, message("options", () => messageOptions)],
    [8, repeatedMessage("oneofDecl", () => oneofKind)],
    [9, repeatedMessage("reservedRange", () => messageReservedRange)],
    [10, repeatedString("reservedName")],
  ]),
};

const methodKind: DescriptorKind = {
  typeName: "google.protobuf.MethodDescriptorProto",
  defaults: { name: "", inputType: "", outputType: "", clientStreaming: false, serverStreaming: false },
  repeated: [],
  fields: new Map([
    [1, scalar("name", string)],
    [2, scalar("inputType", string)],
    [3, scalar("outputType", string)],
    [4, message("options", () => methodOptions)],
    [5, scalar("clientStreaming", bool)],
    [6, scalar("serverStreaming", bool)],
  ]),
};

const serviceKind: DescriptorKind = {
  typeName: "google.protobuf.ServiceDescriptorProto",
  defaults: { name: "" },
  repeated: ["method"],
  fields: new Map([
    [1, scalar("name", string)],
    [2, repeatedMessage("method", () => methodKind)],
    [3, message("options", () => serviceOptions)],
  ]),
};

const fileKind: DescriptorKind = {
  typeName: "google.protobuf.FileDescriptorProto",
  defaults: { name: "", package: "", syntax: "", edition: 0 },
  repeated: ["dependency", "publicDependency", "weakDependency", "optionDependency", "messageType", "enumType", "service", "extension"],
  fields: new Map([
    [
      1,
      (reader, into, where) => {
        where.file = reader.string();
        into["name"] = where.file;
      },
    ],
    [2, scalar("package", string)],
    [4, repeatedMessage("messageType", () => messageKind)],
    [5, repeatedMessage("enumType", () => enumKind)],
    [6, repeatedMessage("service", () => serviceKind)],
    [8, message("options", () => fileOptions)],
    [12, scalar("syntax", string)],
  ]),
};

function decode(kind: DescriptorKind, bytes: Uint8Array, where: Where): Decoded {
  const into = Object.create(kind.defaults) as Decoded;
  into["$typeName"] = kind.typeName;
  for (const name of kind.repeated) into[name] = [];
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [fieldNumber, wireType] = reader.tag();
    const read = kind.fields.get(fieldNumber);
    if (read !== undefined) {
      read(reader, into, where);
    } else if (kind.skipped?.(fieldNumber) === true) {
      reader.skip(wireType, fieldNumber);
    } else {
      throw new Error(`${where.file}: the embedded descriptor sets field ${fieldNumber} of ${kind.typeName}, which this decoder does not read; hydrate the file with protobuf-es's own fileDesc`);
    }
  }
  return into;
}

/** restoreJsonNames gives every field without an explicit JSON name the one protoc derives, as protobuf-es's fileDesc does. */
function restoreJsonNames(message: DescriptorProto): void {
  for (const field of message.field) {
    if (!Object.hasOwn(field, "jsonName")) (field as FieldDescriptorProto).jsonName = protoCamelCase(field.name);
  }
  message.nestedType.forEach(restoreJsonNames);
}

/**
 * decodeFileDescriptorProto decodes `bytes` (a generated file's embedded
 * descriptor, its dependencies cleared by the embedding) and names
 * `dependencies` as the files it imports.
 */
export function decodeFileDescriptorProto(bytes: Uint8Array, dependencies: readonly string[]): FileDescriptorProto {
  const file = decode(fileKind, bytes, { file: "a generated file (name not read yet)" }) as unknown as FileDescriptorProto;
  if (file.syntax !== "proto3" && file.syntax !== "proto2" && file.syntax !== "") {
    throw new Error(`${file.name}: syntax "${file.syntax}" is not read by this decoder; hydrate the file with protobuf-es's own fileDesc`);
  }
  file.messageType.forEach(restoreJsonNames);
  file.dependency = [...dependencies];
  return file;
}
