import { afterAll, describe, expect, it } from "bun:test";
import { $ } from "bun";
import { mkdtempSync, copyFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { secretFields } from "../../../src/csi/secret-fields";

/**
 * Our proto/csi/v1/csi.proto is a hand-written subset of the CSI spec. Every
 * message, field, enum value and method it declares must match the upstream
 * csi.proto of the same version exactly (name, number, label, type), or the
 * bytes on the wire would differ from what real drivers speak. The upstream
 * file comes from the CSI spec's Go module, through the Go module proxy.
 * Our subset leaves out upstream's field options; the one that matters,
 * csi_secret, is src/csi/secret-fields.ts, held to upstream here.
 */
const specVersion = "v1.13.0";

interface Field { name: string; number: number; label: string; type: string; typeName?: string; oneofIndex?: number; options?: Record<string, unknown> }
interface Message { name: string; field?: Field[]; nestedType?: Message[]; enumType?: Enum[]; oneofDecl?: { name: string }[] }
interface Enum { name: string; value: { name: string; number: number }[] }
interface Service { name: string; method: { name: string; inputType: string; outputType: string }[] }
interface File { name: string; package?: string; messageType?: Message[]; enumType?: Enum[]; service?: Service[] }

async function describeProto(dir: string): Promise<File> {
  const image = (await $`buf build ${dir} -o -#format=json`.json()) as { file: File[] };
  const file = image.file.find((candidate) => candidate.package === "csi.v1");
  if (!file) throw new Error(`no csi.v1 file built from ${dir}`);
  return file;
}

function flattenMessages(messages: Message[] = [], prefix = ""): Map<string, Message> {
  const all = new Map<string, Message>();
  for (const message of messages) {
    const name = `${prefix}${message.name}`;
    all.set(name, message);
    for (const [nestedName, nested] of flattenMessages(message.nestedType, `${name}.`)) all.set(nestedName, nested);
  }
  return all;
}

function flattenEnums(file: File): Map<string, Enum> {
  const all = new Map<string, Enum>();
  for (const e of file.enumType ?? []) all.set(e.name, e);
  for (const [name, message] of flattenMessages(file.messageType)) {
    for (const e of message.enumType ?? []) all.set(`${name}.${e.name}`, e);
  }
  return all;
}

// The wire-relevant shape of a field; the oneof is compared by name.
function fieldShape(field: Field, message: Message) {
  const oneof = field.oneofIndex === undefined ? undefined : message.oneofDecl?.[field.oneofIndex]?.name;
  return { name: field.name, number: field.number, label: field.label, type: field.type, typeName: field.typeName, oneof };
}

async function upstreamProtoDir(): Promise<string> {
  const download = (await $`go mod download -json github.com/container-storage-interface/spec@${specVersion}`.json()) as { Dir: string };
  const dir = mkdtempSync(join(tmpdir(), "csi-spec-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  copyFileSync(join(download.Dir, "csi.proto"), join(dir, "csi.proto"));
  return dir;
}

describe(`proto/csi/v1/csi.proto against CSI spec ${specVersion}`, async () => {
  const ours = await describeProto(join(import.meta.dir, "../../../proto"));
  const upstream = await describeProto(await upstreamProtoDir());
  const upstreamMessages = flattenMessages(upstream.messageType);

  it("declares every message field with upstream's name, number, label and type", () => {
    for (const [name, message] of flattenMessages(ours.messageType)) {
      const theirs = upstreamMessages.get(name);
      expect(theirs, `message ${name} exists upstream`).toBeDefined();
      if (!theirs) continue;
      const theirFields = new Map((theirs.field ?? []).map((field) => [field.number, fieldShape(field, theirs)]));
      for (const field of message.field ?? []) {
        const expected: object = { message: name, ...theirFields.get(field.number) };
        expect({ message: name, ...fieldShape(field, message) }).toEqual(expected as ReturnType<typeof fieldShape> & { message: string });
      }
    }
  });

  it("names as secret exactly the fields of the subset's messages that upstream marks csi_secret", () => {
    const upstreamSecrets = new Map<string, string[]>();
    for (const [name] of flattenMessages(ours.messageType)) {
      const marked = (upstreamMessages.get(name)?.field ?? []).filter((field) => field.options?.["[csi.v1.csi_secret]"] === true).map((field) => field.name);
      if (marked.length > 0) upstreamSecrets.set(`csi.v1.${name}`, marked.sort());
    }
    const table = new Map([...secretFields].map(([message, fields]) => [message, [...fields].sort()]));
    expect(Object.fromEntries(table)).toEqual(Object.fromEntries(upstreamSecrets));
  });

  it("keeps upstream's complete enum values", () => {
    const theirs = flattenEnums(upstream);
    for (const [name, e] of flattenEnums(ours)) {
      // Names and numbers: upstream's alpha_enum_value options are not in our subset, and never on the wire.
      const wire = (values: Enum["value"]) => values.map(({ name, number }) => ({ name, number }));
      expect({ name, values: wire(e.value) }).toEqual({ name, values: wire(theirs.get(name)?.value ?? []) });
    }
  });

  it("declares each method with upstream's request and response types", () => {
    for (const service of ours.service ?? []) {
      const theirService = upstream.service?.find((candidate) => candidate.name === service.name);
      for (const method of service.method) {
        const theirMethod = theirService?.method.find((candidate) => candidate.name === method.name);
        const expected: object = { service: service.name, ...theirMethod, name: method.name };
        expect({ service: service.name, ...method }).toEqual(expected as typeof method & { service: string });
      }
    }
  });
});
