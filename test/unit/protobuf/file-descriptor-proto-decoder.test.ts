import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { create, toBinary, toJson, type DescFile, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { fileDesc as librarysFileDesc } from "@bufbuild/protobuf/codegenv2";
import { FileDescriptorProtoSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { base64Decode, base64Encode } from "@bufbuild/protobuf/wire";
import { file_csi_v1_csi } from "../../../gen/csi/v1/csi_pb";
import { file_google_protobuf_any } from "../../../gen/google/protobuf/any_pb";
import { file_google_protobuf_wrappers } from "../../../gen/google/protobuf/wrappers_pb";
import { file_google_rpc_status } from "../../../gen/google/rpc/status_pb";
import { decodeFileDescriptorProto } from "../../../src/protobuf/file-descriptor-proto-decoder";

/** Every file in gen/: its source, the descriptor our runtime hydrated from it, and the files it imports. */
const generatedFiles: readonly { readonly source: string; readonly hydrated: DescFile; readonly imports: DescFile[] }[] = [
  { source: "gen/csi/v1/csi_pb.ts", hydrated: file_csi_v1_csi, imports: [file_google_protobuf_wrappers] },
  { source: "gen/google/protobuf/wrappers_pb.ts", hydrated: file_google_protobuf_wrappers, imports: [] },
  { source: "gen/google/protobuf/any_pb.ts", hydrated: file_google_protobuf_any, imports: [] },
  { source: "gen/google/rpc/status_pb.ts", hydrated: file_google_rpc_status, imports: [file_google_protobuf_any] },
];

/** embeddedDescriptor is the base64 FileDescriptorProto a generated file passes to its fileDesc call. */
function embeddedDescriptor(source: string): string {
  const match = /fileDesc\("([A-Za-z0-9+/=]+)"/.exec(readFileSync(source, "utf8"));
  if (match?.[1] === undefined) throw new Error(`${source} has no fileDesc call`);
  return match[1];
}

function encoded(proto: Parameters<typeof create<typeof FileDescriptorProtoSchema>>[1]): Uint8Array {
  return toBinary(FileDescriptorProtoSchema, create(FileDescriptorProtoSchema, proto));
}

describe("decodeFileDescriptorProto", () => {
  it("hydrates every file in gen/ to the descriptor protobuf-es's own fileDesc builds from it", () => {
    expect(generatedFiles.map((file) => file.source).sort()).toEqual(
      [...new Bun.Glob("gen/**/*_pb.ts").scanSync()].sort(),
    );
    for (const { source, hydrated, imports } of generatedFiles) {
      const librarys = librarysFileDesc(embeddedDescriptor(source), imports);
      // The file's options for other languages' generators (go_package, java_*) are skipped by design; deprecated is the one the registry reads.
      const { options: ourOptions, ...ours } = toJson(FileDescriptorProtoSchema, hydrated.proto) as JsonObject;
      const { options: theirOptions, ...theirs } = toJson(FileDescriptorProtoSchema, librarys.proto) as JsonObject;
      expect(ours).toEqual(theirs);
      const deprecated = (options: JsonValue | undefined) => (options as JsonObject | undefined)?.["deprecated"];
      expect(deprecated(ourOptions)).toEqual(deprecated(theirOptions));
      expect(hydrated.messages.map((message) => message.toString())).toEqual(librarys.messages.map((message) => message.toString()));
      for (const [i, message] of hydrated.messages.entries()) {
        const fields = (m: typeof message) => m.fields.map((f) => [f.number, f.name, f.jsonName, f.fieldKind, f.oneof?.name, f.presence, f.toString()]);
        expect(fields(message)).toEqual(fields(librarys.messages[i] ?? message));
      }
    }
  });

  it("leaves a field unset on the wire unset, its default reached through the prototype, as protobuf-es's decoder does", () => {
    const file = decodeFileDescriptorProto(base64Decode(embeddedDescriptor("gen/csi/v1/csi_pb.ts")), []);
    const publish = file.messageType.find((message) => message.name === "ControllerPublishVolumeRequest");
    const volumeId = publish?.field.find((field) => field.name === "volume_id");
    expect(volumeId).toBeDefined();
    expect(Object.hasOwn(volumeId ?? {}, "oneofIndex")).toBe(false);
    expect(Object.hasOwn(volumeId ?? {}, "defaultValue")).toBe(false);
    expect(volumeId?.oneofIndex).toBe(0);
    // The embedding strips a JSON name protoc would derive; decoding restores it.
    expect(Object.hasOwn(volumeId ?? {}, "jsonName")).toBe(true);
    expect(volumeId?.jsonName).toBe("volumeId");
  });

  it("keeps what a field sets explicitly: a JSON name of its own, a proto2 default, packing", () => {
    const bytes = encoded({
      name: "explicit.proto",
      syntax: "proto2",
      messageType: [
        {
          name: "M",
          field: [
            { name: "size_limit", number: 1, type: 5, label: 1, jsonName: "limit", defaultValue: "7" },
            { name: "ids", number: 2, type: 5, label: 3, options: { packed: true } },
          ],
        },
      ],
    });
    const decoded = decodeFileDescriptorProto(bytes, []);
    expect(toJson(FileDescriptorProtoSchema, decoded)).toEqual(toJson(FileDescriptorProtoSchema, librarysFileDesc(base64Encode(bytes)).proto));
    const [sizeLimit, ids] = decoded.messageType[0]?.field ?? [];
    expect(sizeLimit?.jsonName).toBe("limit");
    expect(Object.hasOwn(sizeLimit ?? {}, "defaultValue")).toBe(true);
    expect(sizeLimit?.defaultValue).toBe("7");
    expect(ids?.jsonName).toBe("ids");
    expect(Object.hasOwn(ids?.options ?? {}, "packed")).toBe(true);
    expect(ids?.options?.packed).toBe(true);
  });

  it("names the imports it is given as the file's dependencies", () => {
    const file: FileDescriptorProto = decodeFileDescriptorProto(base64Decode(embeddedDescriptor("gen/google/rpc/status_pb.ts")), ["google/protobuf/any.proto"]);
    expect(file.dependency).toEqual(["google/protobuf/any.proto"]);
  });

  it("skips the options that only guide code generators", () => {
    const file = decodeFileDescriptorProto(encoded({ name: "gen-options.proto", syntax: "proto3", options: { goPackage: "example.com/x", javaPackage: "com.example", javaMultipleFiles: true } }), []);
    expect(file.name).toBe("gen-options.proto");
    expect(file.options?.deprecated).toBe(false);
  });

  it("refuses a descriptor with edition features, naming the file and the field, rather than hydrate part of it", () => {
    const bytes = encoded({ name: "features.proto", syntax: "proto3", messageType: [{ name: "M", field: [{ name: "f", number: 1, type: 9, label: 1, options: { features: { fieldPresence: 1 } } }] }] });
    expect(() => decodeFileDescriptorProto(bytes, [])).toThrow("features.proto: the embedded descriptor sets field 21 of google.protobuf.FieldOptions");
  });

  it("refuses extensions and custom options", () => {
    const extension = encoded({ name: "extension.proto", syntax: "proto2", extension: [{ name: "x", number: 1000, type: 9, label: 1, extendee: ".M" }] });
    expect(() => decodeFileDescriptorProto(extension, [])).toThrow("extension.proto: the embedded descriptor sets field 7 of google.protobuf.FileDescriptorProto");
    const withCustomOption = new Uint8Array([...encoded({ name: "custom.proto", syntax: "proto3" }), ...[0x42, 0x03, 0xc0, 0x3e, 0x01]]);
    expect(() => decodeFileDescriptorProto(withCustomOption, [])).toThrow("custom.proto: the embedded descriptor sets field 1000 of google.protobuf.FileOptions");
  });

  it("refuses a file in editions syntax", () => {
    expect(() => decodeFileDescriptorProto(encoded({ name: "editions.proto", syntax: "editions", edition: 1000 }), [])).toThrow("editions.proto: the embedded descriptor sets field 14 of google.protobuf.FileDescriptorProto");
  });
});
