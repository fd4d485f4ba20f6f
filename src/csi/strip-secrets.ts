import { toJson, type DescMessage, type JsonObject, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { secretFields } from "./secret-fields";

/** The text a secret field's value is replaced with, as csi-lib-utils' protosanitizer writes it. */
export const strippedText = "***stripped***";

/**
 * stripSecrets renders a CSI message as one-line JSON for a -v=5 log line,
 * with every field the CSI spec marks `[(csi_secret) = true]` replaced by
 * `***stripped***`, in nested messages too (csi-lib-utils'
 * protosanitizer.StripSecrets). Which fields those are is the table in
 * secret-fields.ts, which the proto conformance test holds to upstream's
 * csi.proto. Field names are the proto names (`volume_id`), as upstream's.
 *
 * Upstream renders through Go's encoding/json (enums as numbers, oneofs under
 * their Go names); this uses canonical protobuf JSON instead (enum names,
 * oneofs flattened), which reads better and strips the same fields.
 */
export function stripSecrets<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): string {
  const json = toJson(schema, message, { useProtoFieldName: true });
  stripObject(schema, json);
  return JSON.stringify(json);
}

function stripObject(schema: DescMessage, json: JsonValue): void {
  if (!isObject(json)) return;
  const secrets = secretFields.get(schema.typeName);
  for (const field of schema.fields) {
    const value = json[field.name];
    if (value === undefined) continue;
    if (secrets?.has(field.name) === true) {
      json[field.name] = strippedText;
      continue;
    }
    // Secrets may sit in nested messages, in lists of them, and in maps of them.
    if (field.fieldKind === "message") {
      if (field.message.typeName.startsWith("google.protobuf.")) continue;
      stripObject(field.message, value);
    } else if (field.fieldKind === "list" && field.listKind === "message" && Array.isArray(value)) {
      for (const element of value) stripObject(field.message, element);
    } else if (field.fieldKind === "map" && field.mapKind === "message" && isObject(value)) {
      for (const element of Object.values(value)) stripObject(field.message, element);
    }
  }
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
