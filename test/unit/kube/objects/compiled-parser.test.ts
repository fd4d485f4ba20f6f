import { describe, expect, it } from "bun:test";
import * as v from "valibot";
import { timestampedVolumeAttachmentSchema } from "../../../../src/doctor/timestamped-volume-attachment";
import { compileParser, notParsed } from "../../../../src/kube/objects/compiled-parser";
import { csiNodeSchema } from "../../../../src/kube/objects/csi-node";
import { objectParser } from "../../../../src/kube/objects/object-meta";
import { persistentVolumeSchema } from "../../../../src/kube/objects/persistent-volume";
import { volumeAttachmentSchema } from "../../../../src/kube/objects/volume-attachment";
import { ObjectSchemaError } from "../../../../src/kube/errors";

const managedFields = [{ manager: "kube-controller-manager", operation: "Update", fieldsType: "FieldsV1", fieldsV1: { "f:spec": {} } }];

/** API objects as kube-apiserver sends them: fields the schemas drop, nulls, absent optionals, defaults to fill. */
const fixtures: { name: string; schema: v.GenericSchema; objects: unknown[] }[] = [
  {
    name: "VolumeAttachment",
    schema: volumeAttachmentSchema,
    objects: [
      {
        kind: "VolumeAttachment",
        apiVersion: "storage.k8s.io/v1",
        metadata: { name: "va-1", uid: "u-1", resourceVersion: "12", creationTimestamp: "2026-11-28T10:00:00Z", finalizers: ["external-attacher/x"], annotations: { "csi.alpha.kubernetes.io/node-id": "n1" }, managedFields },
        spec: { attacher: "x", nodeName: "node-1", source: { persistentVolumeName: "pv-1" } },
        status: { attached: true, attachmentMetadata: { devicePath: "/dev/x" }, attachError: null },
      },
      {
        metadata: { name: "va-2", deletionTimestamp: "2026-11-28T10:00:01Z", finalizers: null, annotations: null },
        spec: { attacher: "x", nodeName: "node-2", source: { inlineVolumeSpec: { csi: { driver: "x", volumeHandle: "h" }, accessModes: ["ReadWriteOnce"], awsElasticBlockStore: null } } },
        status: { detachError: { message: "boom", time: "2026-11-28T10:00:02Z", errorCode: 13 } },
      },
      { metadata: { name: "va-3", creationTimestamp: "2026-11-28T10:00:00Z" }, spec: { attacher: "y", nodeName: "n", source: {} } },
    ],
  },
  {
    name: "PersistentVolume",
    schema: persistentVolumeSchema,
    objects: [
      {
        kind: "PersistentVolume",
        apiVersion: "v1",
        metadata: { name: "pv-1", resourceVersion: "7", finalizers: ["kubernetes.io/pv-protection"], labels: { zone: "a" }, managedFields },
        spec: {
          csi: { driver: "x", volumeHandle: "vol-1", volumeAttributes: { a: "b" }, controllerPublishSecretRef: { name: "s", namespace: "ns" } },
          accessModes: ["ReadWriteOnce"],
          volumeMode: "Filesystem",
          mountOptions: ["ro"],
          capacity: { storage: "1Gi" },
        },
        status: { phase: "Bound" },
      },
      { metadata: { name: "pv-2", labels: null }, spec: { gcePersistentDisk: { pdName: "d", partition: 1 }, accessModes: null, csi: null } },
      { metadata: { name: "pv-3" } },
      { metadata: { name: "pv-4" }, spec: { csi: { driver: "x", volumeHandle: "h", controllerPublishSecretRef: {} } } },
    ],
  },
  {
    name: "CSINode",
    schema: csiNodeSchema,
    objects: [
      { metadata: { name: "node-1", resourceVersion: "3" }, spec: { drivers: [{ name: "x", nodeID: "n1", topologyKeys: ["zone"] }, { name: "y", nodeID: "n2" }] } },
      { metadata: { name: "node-2" }, spec: { drivers: null } },
      { metadata: { name: "node-3" }, spec: {} },
    ],
  },
  {
    name: "timestamped VolumeAttachment (the doctor's)",
    schema: timestampedVolumeAttachmentSchema,
    objects: [{ metadata: { name: "va-1", creationTimestamp: "2026-11-28T10:00:00Z" }, spec: { attacher: "x", nodeName: "n", source: { persistentVolumeName: "pv" } } }],
  },
];

/** Wrong values put in place of each field in turn. */
const wrongValues: unknown[] = [null, undefined, 0, Number.NaN, "", "text", true, [], {}, ["a"], { a: 1 }];

/** variants yields `object` with the value at each path, in turn, replaced by each wrong value, and with each key removed. */
function* variants(object: unknown, path: string[] = []): Generator<{ path: string; value: unknown }> {
  for (const wrong of wrongValues) yield { path: `${path.join(".")} = ${String(JSON.stringify(wrong))}`, value: wrong };
  if (object === null || typeof object !== "object") return;
  const keys = Object.keys(object);
  for (const key of keys) {
    const rest = Array.isArray(object) ? [...object] : { ...(object as Record<string, unknown>) };
    delete (rest as Record<string, unknown>)[key];
    yield { path: `${[...path, key].join(".")} removed`, value: rest };
    for (const inner of variants((object as Record<string, unknown>)[key], [...path, key])) {
      const copy = Array.isArray(object) ? [...object] : { ...(object as Record<string, unknown>) };
      (copy as Record<string, unknown>)[key] = inner.value;
      yield { path: inner.path, value: copy };
    }
  }
}

/** shapeOf lists every key path in order, an undefined value's included: toStrictEqual does not compare key order. */
function shapeOf(value: unknown, at = ""): string[] {
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) => [`${at}.${key}`, ...shapeOf(inner, `${at}.${key}`)]);
}

function expectAgreement(schema: v.GenericSchema, raw: unknown, what: string): void {
  const compiled = compileParser(schema)(raw);
  const expected = v.safeParse(schema, raw);
  if (!expected.success) {
    expect({ what, compiled }).toEqual({ what, compiled: notParsed });
    return;
  }
  expect({ what, compiled }).toStrictEqual({ what, compiled: expected.output });
  expect({ what, shape: shapeOf(compiled) }).toEqual({ what, shape: shapeOf(expected.output) });
}

describe("compiled parser of an API object schema", () => {
  for (const { name, schema, objects } of fixtures) {
    it(`returns what valibot returns for every ${name} it accepts, key for key and in valibot's order`, () => {
      for (const object of objects) expectAgreement(schema, object, JSON.stringify(object));
    });

    it(`refuses exactly the ${name}s valibot refuses, and agrees on the rest, with any one field wrong or missing`, () => {
      let refused = 0;
      for (const object of objects) {
        for (const variant of variants(object)) {
          expectAgreement(schema, variant.value, variant.path);
          if (!v.safeParse(schema, variant.value).success) refused++;
        }
      }
      // The variants must reach the rejecting paths, or this rule checks nothing.
      expect(refused).toBeGreaterThan(20);
    });
  }

  it("skips a record's keys that could reach a prototype, as valibot does", () => {
    const raw = JSON.parse('{"metadata":{"name":"pv","labels":{"__proto__":"x","constructor":"y","zone":"a"}},"spec":{}}') as unknown;
    expectAgreement(persistentVolumeSchema, raw, "labels with __proto__");
    const parsed = compileParser(persistentVolumeSchema)(raw);
    expect(parsed === notParsed ? undefined : parsed.metadata.labels).toEqual({ zone: "a" });
    // An in-tree source keeps its values whole (unknown): a "__proto__" object among them must not become the output's prototype.
    const polluting = JSON.parse('{"metadata":{"name":"pv"},"spec":{"gcePersistentDisk":{"__proto__":{"polluted":"yes"},"pdName":"d"}}}') as unknown;
    expectAgreement(persistentVolumeSchema, polluting, "in-tree source with __proto__");
    const source = compileParser(persistentVolumeSchema)(polluting);
    const disk = source === notParsed ? undefined : source.spec.gcePersistentDisk;
    expect(disk === undefined || disk === null ? undefined : Object.getPrototypeOf(disk)).toBe(Object.prototype);
    expect((disk as Record<string, unknown> | undefined)?.["polluted"]).toBeUndefined();
  });

  it("refuses an object that lacks a required key, even one whose schema would take undefined", () => {
    const schema = v.object({ name: v.string(), extra: v.unknown() });
    for (const raw of [{ name: "a" }, { name: "a", extra: undefined }, { name: "a", extra: { b: 1 } }]) expectAgreement(schema, raw, JSON.stringify(raw) ?? "");
    expect(compileParser(schema)({ name: "a" })).toBe(notParsed);
  });

  it("returns fresh objects: the input's are never handed on, nor a default shared between calls", () => {
    const parse = compileParser(persistentVolumeSchema);
    const raw = { metadata: { name: "pv", finalizers: ["f"] } };
    const first = parse(raw);
    const second = parse(raw);
    if (first === notParsed || second === notParsed) throw new Error("refused a valid PV");
    expect(first.metadata).not.toBe(raw.metadata);
    expect(first.metadata.finalizers).not.toBe(raw.metadata.finalizers);
    expect(first.spec).not.toBe(second.spec);
  });

  it("refuses to compile a schema it does not fully understand", () => {
    expect(() => compileParser(v.object({ kind: v.literal("Pod") }))).toThrow("schema type literal is not supported");
    expect(() => compileParser(v.object({ name: v.pipe(v.string(), v.minLength(3)) }))).toThrow("pipe action min_length is not supported");
    expect(() => compileParser(v.object({ name: v.optional(v.string(), () => "x") }))).toThrow("computed default");
    expect(() => compileParser(v.record(v.pipe(v.string(), v.nonEmpty()), v.string()))).toThrow("record's keys must be plain strings");
    expect(() => compileParser(v.object({ name: v.fallback(v.string(), "x") }))).toThrow("fallbacks are not supported");
  });
});

describe("an object parser", () => {
  it("still names the object and the first bad field when the compiled parser refuses it", () => {
    const raw = { metadata: { name: "va-1" }, spec: { attacher: "x", nodeName: 7, source: {} } };
    expect(() => objectParser("VolumeAttachment", volumeAttachmentSchema)(raw)).toThrow(ObjectSchemaError);
    expect(() => objectParser("VolumeAttachment", volumeAttachmentSchema)(raw)).toThrow(/VolumeAttachment.*va-1.*spec\.nodeName/);
  });

  it("refuses an empty name, as the schema's nonEmpty says", () => {
    expect(() => objectParser("CSINode", csiNodeSchema)({ metadata: { name: "" }, spec: {} })).toThrow("metadata.name is empty");
  });
});
