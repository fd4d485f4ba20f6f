import { describe, expect, it } from "bun:test";
import { TranslationError } from "../../../../src/controller/migration/errors";
import { repairVolumeHandle } from "../../../../src/controller/migration/repair-volume-handle";

const gce = "pd.csi.storage.gke.io";
const node = (project: string, zone: string, name: string) => `projects/${project}/zones/${zone}/instances/${name}`;

describe("GCE PD volume handle repair", () => {
  // csi-translation-lib's TestRepairVolumeHandle.
  const cases: [string, string, string, string][] = [
    ["keeps a fully specified zonal handle", "projects/foo/zones/bar/disks/baz", node("bing", "bada", "boom"), "projects/foo/zones/bar/disks/baz"],
    [
      "keeps a fully specified regional handle",
      "projects/foo/regions/us-central1-c/disks/baz",
      node("bing", "bada", "boom"),
      "projects/foo/regions/us-central1-c/disks/baz",
    ],
    ["takes the project from the node ID", "projects/UNSPECIFIED/zones/bar/disks/baz", node("bing", "bada", "boom"), "projects/bing/zones/bar/disks/baz"],
    [
      "takes project and zone from the node ID",
      "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/baz",
      node("bing", "bada", "boom"),
      "projects/bing/zones/bada/disks/baz",
    ],
    [
      "takes the project from the node ID and the region from its zone",
      "projects/UNSPECIFIED/regions/UNSPECIFIED/disks/baz",
      node("bing", "us-central1-c", "boom"),
      "projects/bing/regions/us-central1/disks/baz",
    ],
    [
      "keeps a known region while taking the project",
      "projects/UNSPECIFIED/regions/us-west1/disks/baz",
      node("bing", "us-central1-c", "boom"),
      "projects/bing/regions/us-west1/disks/baz",
    ],
  ];
  for (const [rule, handle, nodeId, repaired] of cases) {
    it(rule, () => {
      expect(repairVolumeHandle(gce, handle, nodeId)).toBe(repaired);
    });
  }

  const failures: [string, string, string, string][] = [
    ["refuses a handle of too few elements", "foo", node("bing", "us-central1-c", "boom"), "volume handle has wrong number of elements; got 1, wanted 6 or more"],
    ["refuses a node ID of too few elements", "projects/UNSPECIFIED/regions/us-west1/disks/baz", "foo", "node handle has wrong number of elements; got 1, wanted 6 or more"],
    [
      "refuses a regional handle when the node's zone names no region",
      "projects/UNSPECIFIED/regions/UNSPECIFIED/disks/baz",
      node("bing", "bada", "boom"),
      "failed to get region from zone bada: zone in unexpected format, expected: {locale}-{region}-{zone}, got: bada",
    ],
    [
      "refuses a handle that is neither zonal nor regional",
      "projects/UNSPECIFIED/global/x/disks/baz",
      node("bing", "bada", "boom"),
      "expected volume handle to have zones or regions regionality value, got: global",
    ],
  ];
  for (const [rule, handle, nodeId, message] of failures) {
    it(rule, () => {
      expect(() => repairVolumeHandle(gce, handle, nodeId)).toThrow(new TranslationError(message));
    });
  }
});

describe("volume handle repair of other drivers", () => {
  for (const driver of ["ebs.csi.aws.com", "disk.csi.azure.com", "cinder.csi.openstack.org", "csi.vsphere.vmware.com", "pxd.portworx.com"]) {
    it(`returns the ${driver} handle unchanged`, () => {
      expect(repairVolumeHandle(driver, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/x", "node-1")).toBe("projects/UNSPECIFIED/zones/UNSPECIFIED/disks/x");
    });
  }

  it("refuses a driver that replaces no in-tree plugin, in upstream's words", () => {
    expect(() => repairVolumeHandle("hostpath.csi.k8s.io", "h", "n")).toThrow(new TranslationError("could not find In-Tree driver name for CSI plugin hostpath.csi.k8s.io"));
  });
});
