import type { CallRecord, CsiMethodName } from "../../ground/fake-csi-driver/control-protocol";
import type { FakeCsiDriver } from "../../ground/fake-csi-driver/launch";

/**
 * Builders for the objects the rule tests create beyond support/objects.ts:
 * VAs that already carry our finalizer and node-ID annotation (so the only
 * watch events a test causes are the attacher's own status writes), inline
 * VAs, and PVs with given finalizers or in-tree sources.
 */

export const nodeIdAnnotation = "csi.alpha.kubernetes.io/node-id";

export interface RuleVaOptions {
  readonly attacher: string;
  readonly node: string;
  /** The PV the VA names; omitted for an inline VA. */
  readonly pv?: string;
  /** An inline PV spec (`spec.source.inlineVolumeSpec`). */
  readonly inline?: object;
  readonly finalizers?: readonly string[];
  readonly annotations?: Record<string, string>;
}

export function ruleVolumeAttachment(name: string, options: RuleVaOptions) {
  const metadata: Record<string, unknown> = { name };
  if (options.finalizers) metadata.finalizers = options.finalizers;
  if (options.annotations) metadata.annotations = options.annotations;
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "VolumeAttachment",
    metadata,
    spec: {
      attacher: options.attacher,
      nodeName: options.node,
      source: options.inline ? { inlineVolumeSpec: options.inline } : { persistentVolumeName: options.pv },
    },
  };
}

/** prepublishedVa: a VA that already has `finalizer` and the node ID `<node>-id`, as the attacher would have written them. */
export function prepublishedVa(name: string, options: RuleVaOptions & { readonly finalizer: string }) {
  return ruleVolumeAttachment(name, { ...options, finalizers: [options.finalizer], annotations: { [nodeIdAnnotation]: `${options.node}-id` } });
}

/** rawPersistentVolume: a PV with any spec (in-tree sources, no CSI source) and metadata. */
export function rawPersistentVolume(name: string, spec: object, metadata: object = {}) {
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name, ...metadata },
    spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], persistentVolumeReclaimPolicy: "Retain", ...spec },
  };
}

/** callsFor lists the driver's calls of `method` for one volume, oldest first. */
export async function callsFor(driver: FakeCsiDriver, method: CsiMethodName, volumeId: string): Promise<CallRecord[]> {
  return (await driver.control.calls(method)).filter((call) => (call.request as { volumeId?: string }).volumeId === volumeId);
}

/** gapsMs: the time between the starts of consecutive calls. */
export function gapsMs(calls: readonly CallRecord[]): number[] {
  const starts = calls.map((call) => Date.parse(call.startedAt));
  return starts.slice(1).map((start, i) => start - (starts[i] ?? start));
}
