import * as v from "valibot";
import type { CsiPersistentVolumeSource, PersistentVolumeSpec } from "../../kube/objects/persistent-volume";
import { InTreeSourceError } from "./errors";

/** The PV spec fields of the attachable in-tree plugins that CSI migration covers. */
export type InTreeSourceField =
  | "awsElasticBlockStore"
  | "gcePersistentDisk"
  | "azureDisk"
  | "cinder"
  | "vsphereVolume"
  | "portworxVolume";

/**
 * InTreeVolume is what a plugin translates: the PV spec (or a VA's inline
 * spec, which has the same shape) and the PV metadata some plugins read —
 * GCE PD takes its zone from the labels, Portworx its secret from the
 * annotations.
 */
export interface InTreeVolume {
  readonly spec: PersistentVolumeSpec;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** Names the volume in errors, e.g. `PersistentVolume "pv-1"`. */
  readonly subject: string;
}

/** TranslatedSource is a plugin's answer: the CSI source, and the access modes when the plugin rewrites them. */
export interface TranslatedSource {
  readonly csi: CsiPersistentVolumeSource;
  /** Present only when the plugin changes the PV's access modes (GCE PD does). */
  readonly accessModes?: string[] | null | undefined;
}

/**
 * InTreePlugin is one in-tree volume plugin as csi-translation-lib sees it:
 * which spec field it owns, the CSI driver that replaces it, how its source
 * becomes a CSI source, and how a handle built without node knowledge is
 * made whole once the node is known.
 */
export interface InTreePlugin {
  readonly sourceField: InTreeSourceField;
  readonly driverName: string;
  /** translate builds the CSI source; throws InTreeSourceError or TranslationError on bad input. */
  translate(volume: InTreeVolume): TranslatedSource;
  /** repairVolumeHandle completes a translated handle using the node ID; most plugins return it unchanged. */
  repairVolumeHandle(volumeHandle: string, nodeId: string): string;
}

/**
 * parseInTreeSource validates the plugin's source in the spec against the
 * schema of the fields the translation reads, failing with an
 * InTreeSourceError that names the volume and the field.
 */
export function parseInTreeSource<S extends v.GenericSchema>(volume: InTreeVolume, field: InTreeSourceField, schema: S): v.InferOutput<S> {
  const result = v.safeParse(schema, volume.spec[field]);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = issue ? v.getDotPath(issue) : null;
  // valibot words a missing key as `Invalid key: Expected "pdName" but
  // received undefined`; say it plainly.
  const missing = issue?.type === "object" && issue.input === undefined && path !== null;
  throw new InTreeSourceError(volume.subject, path ? `${field}.${path}` : field, missing ? "is required" : (issue?.message ?? "invalid"));
}

/** Schema pieces every in-tree source shares; the API server fills no defaults for them. */
export const optionalString = v.optional(v.string(), "");
export const optionalBoolean = v.optional(v.boolean(), false);
/** A field the API server requires; an empty one would only build a handle that names nothing. */
export const requiredString = v.pipe(v.string(), v.nonEmpty("must not be empty"));
