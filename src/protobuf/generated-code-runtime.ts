/**
 * What the generated code in gen/ imports in place of
 * `@bufbuild/protobuf/codegenv2` (buf.gen.yaml's `rewrite_imports`): the
 * library's own functions, except `fileDesc`, which hydrates a generated
 * file's embedded descriptor from a decoder of our own
 * (file-descriptor-proto-decoder.ts) instead of protobuf-es's reflection
 * over descriptor.proto, whose descriptors the library would otherwise
 * build at every start for this alone. The registry, the schemas and every
 * message the attacher encodes and decodes are protobuf-es's, as before.
 */
import { createFileRegistry, type DescFile } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { decodeFileDescriptorProto } from "./file-descriptor-proto-decoder";

export * from "@bufbuild/protobuf/codegenv2";

/** fileDesc builds the descriptor of a generated file from its embedded FileDescriptorProto and the files it imports, as codegenv2's does. */
export function fileDesc(base64: string, imports?: DescFile[]): DescFile {
  const proto = decodeFileDescriptorProto(base64Decode(base64), imports?.map((file) => file.proto.name) ?? []);
  const registry = createFileRegistry(proto, (name) => imports?.find((file) => file.proto.name === name));
  const file = registry.getFile(proto.name);
  // createFileRegistry registers the file it was given or throws, so this only guards the types.
  if (file === undefined) throw new Error(`${proto.name}: protobuf-es registered no file for its descriptor`);
  return file;
}
