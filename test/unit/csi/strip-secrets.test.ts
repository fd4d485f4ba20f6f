import { describe, expect, it } from "bun:test";
import { create, createFileRegistry, type DescMessage } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { ControllerPublishVolumeRequestSchema, file_csi_v1_csi, VolumeCapability_AccessMode_Mode } from "../../../gen/csi/v1/csi_pb";
import { stripSecrets } from "../../../src/csi/strip-secrets";

const publishRequest = create(ControllerPublishVolumeRequestSchema, {
  volumeId: "vol-1",
  nodeId: "node-1-id",
  volumeCapability: { accessType: { case: "mount", value: { fsType: "ext4" } }, accessMode: { mode: VolumeCapability_AccessMode_Mode.SINGLE_NODE_WRITER } },
  secrets: { password: "hunter2", user: "admin" },
  volumeContext: { zone: "a" },
});

/** A message that holds publish requests one level down, singly, in a list and in a map: secrets nest in real CSI messages too. */
function wrapperSchema(): DescMessage {
  const request = ".csi.v1.ControllerPublishVolumeRequest";
  const field = (name: string, number: number, label: FieldDescriptorProto_Label, typeName: string) => ({ name, number, label, type: FieldDescriptorProto_Type.MESSAGE, typeName, jsonName: name });
  const registry = createFileRegistry(
    create(FileDescriptorProtoSchema, {
      name: "wrapper.proto",
      package: "test",
      syntax: "proto3",
      dependency: ["csi/v1/csi.proto"],
      messageType: [
        {
          name: "Wrapper",
          field: [
            field("single", 1, FieldDescriptorProto_Label.OPTIONAL, request),
            field("many", 2, FieldDescriptorProto_Label.REPEATED, request),
            field("by_name", 3, FieldDescriptorProto_Label.REPEATED, ".test.Wrapper.ByNameEntry"),
          ],
          nestedType: [
            {
              name: "ByNameEntry",
              options: { mapEntry: true },
              field: [
                { name: "key", number: 1, label: FieldDescriptorProto_Label.OPTIONAL, type: FieldDescriptorProto_Type.STRING, jsonName: "key" },
                field("value", 2, FieldDescriptorProto_Label.OPTIONAL, request),
              ],
            },
          ],
        },
      ],
    }),
    (name) => (name === "csi/v1/csi.proto" ? file_csi_v1_csi : undefined),
  );
  const schema = registry.getMessage("test.Wrapper");
  if (!schema) throw new Error("test.Wrapper missing from the registry");
  return schema;
}

describe("stripSecrets (protosanitizer)", () => {
  it("replaces a csi_secret field with ***stripped*** and keeps every other field under its proto name", () => {
    expect(JSON.parse(stripSecrets(ControllerPublishVolumeRequestSchema, publishRequest))).toEqual({
      volume_id: "vol-1",
      node_id: "node-1-id",
      volume_capability: { mount: { fs_type: "ext4" }, access_mode: { mode: "SINGLE_NODE_WRITER" } },
      secrets: "***stripped***",
      volume_context: { zone: "a" },
    });
  });

  it("never lets a secret value through, in nested messages, lists and maps of them", () => {
    const schema = wrapperSchema();
    const text = stripSecrets(schema, create(schema, { single: publishRequest, many: [publishRequest, publishRequest], byName: { a: publishRequest } }));
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("admin");
    expect(text.match(/\*\*\*stripped\*\*\*/g)?.length).toBe(4);
  });

  it("leaves out unset secrets rather than claiming there were some", () => {
    const text = stripSecrets(ControllerPublishVolumeRequestSchema, create(ControllerPublishVolumeRequestSchema, { volumeId: "vol-1" }));
    expect(text).toBe(`{"volume_id":"vol-1"}`);
  });
});
