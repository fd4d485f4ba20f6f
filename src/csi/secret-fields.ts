/**
 * secretFields names, per CSI message of proto/csi/v1 (full proto name), the
 * fields the CSI spec marks `[(csi_secret) = true]`: what stripSecrets
 * replaces before a gRPC payload is logged. The spec says it in a field
 * option, which our subset leaves out (reading it would boot
 * google/protobuf/descriptor.proto at run time, ~1.4 MiB live); instead
 * test/unit/csi/proto-conformance.test.ts checks this table against the
 * upstream csi.proto, so a secret field added to the subset without a row
 * here fails that test.
 */
export const secretFields: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["csi.v1.CreateVolumeRequest", new Set(["secrets"])],
  ["csi.v1.DeleteVolumeRequest", new Set(["secrets"])],
  ["csi.v1.ControllerPublishVolumeRequest", new Set(["secrets"])],
  ["csi.v1.ControllerUnpublishVolumeRequest", new Set(["secrets"])],
]);
