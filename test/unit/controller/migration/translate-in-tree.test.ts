import { describe, expect, it } from "bun:test";
import type { CsiPersistentVolumeSource, PersistentVolumeSpec } from "../../../../src/kube/objects/persistent-volume";
import { InTreeSourceError, TranslationError } from "../../../../src/controller/migration/errors";
import { type InTreeVolumeMeta, translateInTreeSpecToCsi } from "../../../../src/controller/migration/translate-in-tree";

// Each case: the in-tree PV spec and metadata, and the whole CSI source
// csi-translation-lib builds for it. Values mirror its own tests
// (staging/src/k8s.io/csi-translation-lib/plugins/*_test.go) where they exist.
interface Case {
  readonly name: string;
  readonly spec: PersistentVolumeSpec;
  readonly meta?: InTreeVolumeMeta;
  readonly csi: CsiPersistentVolumeSource;
}

function translatesAll(cases: readonly Case[]): void {
  for (const { name, spec, meta, csi } of cases) {
    it(name, () => {
      expect(translateInTreeSpecToCsi(spec, meta).csi).toEqual(csi);
    });
  }
}

describe("AWS EBS translation", () => {
  const ebs = (source: Record<string, unknown>): PersistentVolumeSpec => ({ awsElasticBlockStore: source });
  translatesAll([
    {
      name: "takes a bare EBS volume ID as the handle and always writes the partition",
      spec: ebs({ volumeID: "vol-02399794d890f9375" }),
      csi: { driver: "ebs.csi.aws.com", volumeHandle: "vol-02399794d890f9375", readOnly: false, fsType: "", volumeAttributes: { partition: "0" } },
    },
    {
      name: "strips aws://<zone>/ from the volume ID",
      spec: ebs({ volumeID: "aws://us-west-2a/vol-02399794d890f9375", fsType: "ext4" }),
      csi: { driver: "ebs.csi.aws.com", volumeHandle: "vol-02399794d890f9375", readOnly: false, fsType: "ext4", volumeAttributes: { partition: "0" } },
    },
    {
      name: "strips aws:/// (no zone) from the volume ID",
      spec: ebs({ volumeID: "aws:///vol-02399794d890f9375" }),
      csi: { driver: "ebs.csi.aws.com", volumeHandle: "vol-02399794d890f9375", readOnly: false, fsType: "", volumeAttributes: { partition: "0" } },
    },
    {
      name: "carries partition, fsType and readOnly",
      spec: ebs({ volumeID: "aws://us-east-1b/vol-0abc", fsType: "xfs", partition: 2, readOnly: true }),
      csi: { driver: "ebs.csi.aws.com", volumeHandle: "vol-0abc", readOnly: true, fsType: "xfs", volumeAttributes: { partition: "2" } },
    },
  ]);

  it("refuses an aws:// ID whose path is not an EBS volume ID, in upstream's words", () => {
    expect(() => translateInTreeSpecToCsi(ebs({ volumeID: "aws://us-west-2a/02399794d890f9375" }), { name: "pv-ebs" })).toThrow(
      new TranslationError("failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://us-west-2a/02399794d890f9375)"),
    );
  });
});

describe("GCE PD translation", () => {
  const pd = (source: Record<string, unknown>, accessModes?: string[]): PersistentVolumeSpec => ({
    gcePersistentDisk: source,
    ...(accessModes ? { accessModes } : {}),
  });
  const gce = (volumeHandle: string, extra: Partial<CsiPersistentVolumeSource> = {}): CsiPersistentVolumeSource => ({
    driver: "pd.csi.storage.gke.io",
    volumeHandle,
    readOnly: false,
    fsType: "",
    volumeAttributes: { partition: "" },
    ...extra,
  });
  translatesAll([
    {
      name: "builds a zonal handle from the topology.kubernetes.io/zone label",
      spec: pd({ pdName: "pd-name" }),
      meta: { labels: { "topology.kubernetes.io/zone": "us-east1-a" } },
      csi: gce("projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name"),
    },
    {
      name: "builds a zonal handle from the legacy failure-domain.beta.kubernetes.io/zone label",
      spec: pd({ pdName: "pd-name" }),
      meta: { labels: { "failure-domain.beta.kubernetes.io/zone": "us-east1-a" } },
      csi: gce("projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name"),
    },
    {
      name: "prefers the legacy zone label over the GA one, as upstream reads it first",
      spec: pd({ pdName: "pd-name" }),
      meta: { labels: { "failure-domain.beta.kubernetes.io/zone": "us-east1-b", "topology.kubernetes.io/zone": "us-east1-a" } },
      csi: gce("projects/UNSPECIFIED/zones/us-east1-b/disks/pd-name"),
    },
    {
      name: "builds a regional handle from zones joined by __",
      spec: pd({ pdName: "pd-name" }),
      meta: { labels: { "topology.kubernetes.io/zone": "us-central1-a__us-central1-c" } },
      csi: gce("projects/UNSPECIFIED/regions/us-central1/disks/pd-name"),
    },
    {
      name: "builds a regional handle from the legacy label too",
      spec: pd({ pdName: "pd-name" }),
      meta: { labels: { "failure-domain.beta.kubernetes.io/zone": "us-central1-a__us-central1-c" } },
      csi: gce("projects/UNSPECIFIED/regions/us-central1/disks/pd-name"),
    },
    {
      name: "leaves the zone UNSPECIFIED when the PV has no zone label",
      spec: pd({ pdName: "pd-name" }),
      csi: gce("projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-name"),
    },
    {
      name: "carries a non-zero partition, fsType and readOnly",
      spec: pd({ pdName: "data", partition: 1, fsType: "ext4", readOnly: true }),
      meta: { labels: { "topology.kubernetes.io/zone": "europe-west3-a" } },
      csi: gce("projects/UNSPECIFIED/zones/europe-west3-a/disks/data", { readOnly: true, fsType: "ext4", volumeAttributes: { partition: "1" } }),
    },
  ]);

  it("refuses zones of two regions, in upstream's words", () => {
    const labels = { "topology.kubernetes.io/zone": "us-central1-a__us-east1-b" };
    expect(() => translateInTreeSpecToCsi(pd({ pdName: "pd" }), { name: "pv-pd", labels })).toThrow(
      new TranslationError("failed to get region from zones: multiple or no regions gotten from zones, got: map[us-central1:{} us-east1:{}]"),
    );
  });

  it("refuses a zone that is not {locale}-{region}-{zone}", () => {
    const labels = { "topology.kubernetes.io/zone": "us-central1-a__central" };
    expect(() => translateInTreeSpecToCsi(pd({ pdName: "pd" }), { name: "pv-pd", labels })).toThrow(
      new TranslationError("failed to get region from zones: zone in unexpected format, expected: {locale}-{region}-{zone}, got: central"),
    );
  });

  // csi-translation-lib's TestBackwardCompatibleAccessModes.
  const accessModeCases: [string[], string[]][] = [
    [["ReadOnlyMany"], ["ReadOnlyMany"]],
    [["ReadWriteOnce"], ["ReadWriteOnce"]],
    [["ReadWriteMany"], ["ReadWriteOnce"]],
    [["ReadOnlyMany", "ReadWriteOnce"], ["ReadWriteOnce"]],
    [["ReadWriteOnce", "ReadWriteMany"], ["ReadWriteOnce"]],
    [["ReadWriteMany", "ReadOnlyMany"], ["ReadWriteOnce"]],
    [["ReadWriteMany", "ReadWriteOnce", "ReadOnlyMany"], ["ReadWriteOnce"]],
  ];
  for (const [before, after] of accessModeCases) {
    it(`rewrites access modes [${before.join(" ")}] to [${after.join(" ")}] as the in-tree plugin treated them`, () => {
      expect(translateInTreeSpecToCsi(pd({ pdName: "pd" }, before)).accessModes).toEqual(after);
    });
  }

  it("returns the whole spec with the in-tree source replaced by the CSI one, other fields kept", () => {
    const spec: PersistentVolumeSpec = {
      gcePersistentDisk: { pdName: "pd" },
      accessModes: ["ReadWriteMany"],
      volumeMode: "Block",
      mountOptions: ["ro"],
    };
    expect(translateInTreeSpecToCsi(spec, { labels: { "topology.kubernetes.io/zone": "us-east1-a" } })).toEqual({
      csi: gce("projects/UNSPECIFIED/zones/us-east1-a/disks/pd"),
      accessModes: ["ReadWriteOnce"],
      volumeMode: "Block",
      mountOptions: ["ro"],
    });
    expect(spec.gcePersistentDisk).toEqual({ pdName: "pd" });
  });
});

describe("Azure Disk translation", () => {
  const diskURI = "/subscriptions/12/resourceGroups/23/providers/Microsoft.Compute/disks/name";
  const azure = (source: Record<string, unknown>): PersistentVolumeSpec => ({ azureDisk: { diskName: "name", diskURI, ...source } });
  translatesAll([
    {
      name: "takes the disk URI as the handle and passes caching mode, fsType and kind as volume context",
      spec: azure({ cachingMode: "ReadOnly", fsType: "xfs", readOnly: true, kind: "Managed" }),
      csi: {
        driver: "disk.csi.azure.com",
        volumeHandle: diskURI,
        readOnly: true,
        fsType: "xfs",
        volumeAttributes: { cachingmode: "ReadOnly", fstype: "xfs", kind: "Managed" },
      },
    },
    {
      name: "writes kind Managed even when the PV spells it in lower case",
      spec: azure({ cachingMode: "None", fsType: "ext4", readOnly: false, kind: "managed" }),
      csi: {
        driver: "disk.csi.azure.com",
        volumeHandle: diskURI,
        readOnly: false,
        fsType: "ext4",
        volumeAttributes: { cachingmode: "None", fstype: "ext4", kind: "Managed" },
      },
    },
    {
      name: "sets only kind when the optional fields are absent",
      spec: azure({}),
      csi: { driver: "disk.csi.azure.com", volumeHandle: diskURI, readOnly: false, fsType: "", volumeAttributes: { kind: "Managed" } },
    },
  ]);

  it("refuses an unmanaged (Shared or Dedicated) disk, in upstream's words", () => {
    expect(() => translateInTreeSpecToCsi(azure({ kind: "Shared" }), { name: "pv-az" })).toThrow(
      new TranslationError("kind(Shared) is not supported in csi migration"),
    );
  });
});

describe("OpenStack Cinder translation", () => {
  translatesAll([
    {
      name: "takes the Cinder volume ID as the handle, with empty volume context",
      spec: { cinder: { volumeID: "2f3c4d5e-6a7b-4c8d-9e0f-112233445566", fsType: "ext4", readOnly: true } },
      csi: {
        driver: "cinder.csi.openstack.org",
        volumeHandle: "2f3c4d5e-6a7b-4c8d-9e0f-112233445566",
        readOnly: true,
        fsType: "ext4",
        volumeAttributes: {},
      },
    },
    {
      name: "does not carry the in-tree secretRef over",
      spec: { cinder: { volumeID: "vol-1", secretRef: { name: "os", namespace: "kube-system" } } },
      csi: { driver: "cinder.csi.openstack.org", volumeHandle: "vol-1", readOnly: false, fsType: "", volumeAttributes: {} },
    },
  ]);
});

describe("vSphere translation", () => {
  const volumePath = "[vsanDatastore] 6785a85e-268e-6352-a2e8-02008b7afadd/kubernetes-dynamic-pvc-68734c9f-a679-42e6-a694-39632c51e31f.vmdk";
  translatesAll([
    {
      name: "takes the [datastore] path verbatim as the handle and passes the storage policy",
      spec: { vsphereVolume: { volumePath, fsType: "ext4", storagePolicyName: "vSAN Default Storage Policy" } },
      csi: {
        driver: "csi.vsphere.vmware.com",
        volumeHandle: volumePath,
        readOnly: false,
        fsType: "ext4",
        volumeAttributes: { storagepolicyname: "vSAN Default Storage Policy" },
      },
    },
    {
      name: "leaves the volume context empty without a storage policy",
      spec: { vsphereVolume: { volumePath: "[vsanDatastore] volume/inlinevolume.vmdk", fsType: "ext4", storagePolicyID: "id-1" } },
      csi: {
        driver: "csi.vsphere.vmware.com",
        volumeHandle: "[vsanDatastore] volume/inlinevolume.vmdk",
        readOnly: false,
        fsType: "ext4",
        volumeAttributes: {},
      },
    },
  ]);
});

describe("Portworx translation", () => {
  translatesAll([
    {
      name: "takes the Portworx volume ID as the handle",
      spec: { portworxVolume: { volumeID: "ID1111", fsType: "type", readOnly: false } },
      csi: { driver: "pxd.portworx.com", volumeHandle: "ID1111", readOnly: false, fsType: "type", volumeAttributes: {} },
    },
    {
      name: "turns the PX-Security secret annotations into the publish secret",
      spec: { portworxVolume: { volumeID: "ID2222" } },
      meta: { annotations: { "openstorage.io/auth-secret-name": "px-user-token", "openstorage.io/auth-secret-namespace": "portworx" } },
      csi: {
        driver: "pxd.portworx.com",
        volumeHandle: "ID2222",
        readOnly: false,
        fsType: "",
        volumeAttributes: {},
        controllerPublishSecretRef: { name: "px-user-token", namespace: "portworx" },
      },
    },
    {
      name: "ignores a secret name annotation without its namespace",
      spec: { portworxVolume: { volumeID: "ID3333" } },
      meta: { annotations: { "openstorage.io/auth-secret-name": "px-user-token" } },
      csi: { driver: "pxd.portworx.com", volumeHandle: "ID3333", readOnly: false, fsType: "", volumeAttributes: {} },
    },
  ]);
});

describe("bad in-tree sources", () => {
  it("names the PV and the missing field", () => {
    expect(() => translateInTreeSpecToCsi({ gcePersistentDisk: { fsType: "ext4" } }, { name: "pv-1" })).toThrow(
      new InTreeSourceError('PersistentVolume "pv-1"', "gcePersistentDisk.pdName", "is required"),
    );
  });

  it("names the PV and a field of the wrong type", () => {
    let thrown: unknown;
    try {
      translateInTreeSpecToCsi({ awsElasticBlockStore: { volumeID: "vol-1", partition: "1" } }, { name: "pv-2" });
    } catch (e: unknown) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InTreeSourceError);
    expect((thrown as InTreeSourceError).message).toBe('PersistentVolume "pv-2": spec.awsElasticBlockStore.partition: Invalid type: Expected number but received "1"');
  });

  it("says an empty required field is empty, and that an inline spec has no PV name", () => {
    expect(() => translateInTreeSpecToCsi({ cinder: { volumeID: "" } })).toThrow("inline volume spec: spec.cinder.volumeID: must not be empty");
  });

  it("refuses a spec without an in-tree source", () => {
    expect(() => translateInTreeSpecToCsi({ csi: { driver: "d", volumeHandle: "h", readOnly: false, fsType: "" } }, { name: "pv-3" })).toThrow(
      new TranslationError('could not find in-tree plugin translation logic for "pv-3"'),
    );
  });
});
