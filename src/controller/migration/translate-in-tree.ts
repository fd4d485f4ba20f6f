import type { PersistentVolumeSpec } from "../../kube/objects/persistent-volume";
import { TranslationError } from "./errors";
import type { InTreeSourceField } from "./in-tree-plugin";
import { inTreePluginOf, inTreePlugins } from "./in-tree-plugins";

const inTreeSourceFields: readonly InTreeSourceField[] = inTreePlugins.map((plugin) => plugin.sourceField);

/** The PV metadata the translation reads besides the spec. */
export interface InTreeVolumeMeta {
  /** The PV's name, for errors; an inline spec has none. */
  readonly name?: string | undefined;
  /** GCE PD reads its zone(s) from the topology labels. */
  readonly labels?: Readonly<Record<string, string>> | null | undefined;
  /** Portworx reads its auth secret from the annotations. */
  readonly annotations?: Readonly<Record<string, string>> | null | undefined;
}

/**
 * translateInTreeSpecToCsi turns a PV spec with an in-tree source (AWS EBS,
 * GCE PD, Azure Disk, Cinder, vSphere, Portworx) into the same spec with the
 * `csi` source that Kubernetes' csi-translation-lib would build: the same
 * volume handle, fsType, volume attributes, read-only flag and secret
 * reference, and (for GCE PD) the same access-mode rewrite. It is pure: the
 * input is not modified. Throws InTreeSourceError for a source missing a
 * field the translation reads and TranslationError, worded as upstream, for
 * values that cannot be translated, or when the spec has no in-tree source.
 */
export function translateInTreeSpecToCsi(spec: PersistentVolumeSpec, meta: InTreeVolumeMeta = {}): PersistentVolumeSpec {
  const plugin = inTreePluginOf(spec);
  if (!plugin) throw new TranslationError(`could not find in-tree plugin translation logic for ${JSON.stringify(meta.name ?? "")}`);
  const translated = plugin.translate({
    spec,
    labels: meta.labels ?? {},
    annotations: meta.annotations ?? {},
    subject: meta.name === undefined ? "inline volume spec" : `PersistentVolume ${JSON.stringify(meta.name)}`,
  });
  const result: PersistentVolumeSpec = { ...spec, csi: translated.csi };
  if (translated.accessModes !== undefined) result.accessModes = translated.accessModes;
  for (const field of inTreeSourceFields) delete result[field];
  return result;
}
