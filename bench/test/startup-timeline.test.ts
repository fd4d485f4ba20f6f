import { describe, expect, it } from "bun:test";
import { startupMarks, startupTimeline } from "../lib/startup-timeline";

// Exec at 13:10:54.400000 local time, the clock klog writes its headers in.
const execEpochMs = new Date(2026, 10, 26, 13, 10, 54, 400).getTime();

const ours = [
  'I1126 13:10:54.467487   24645 logging.ts:19] "Version" version="0.1.0" commit="ab5b6aa91837" platform="linux/amd64"',
  'I1126 13:10:54.475312   24645 driver-startup.ts:55] "Probing CSI driver for readiness"',
  'I1126 13:10:54.499503   24645 driver-startup.ts:75] "CSI driver name" driver="bench.csi.test"',
  'I1126 13:10:54.506948   24645 run-attacher.ts:175] "CSI driver supports ControllerPublishUnpublish, using real CSI handler" driver="bench.csi.test"',
  'I1126 13:10:54.527954   24645 reflector.ts:126] "Listed" kind="VolumeAttachment" count=100 resourceVersion="405"',
  'I1126 13:10:54.528754   24645 reflector.ts:126] "Listed" kind="CSINode" count=4 resourceVersion="405"',
  'I1126 13:10:54.532266   24645 reflector.ts:126] "Listed" kind="PersistentVolume" count=100 resourceVersion="405"',
  'I1126 13:10:54.532525   24645 run-attacher.ts:110] "Caches synced" volumeAttachments=100 persistentVolumes=100 csiNodes=4',
  'I1126 13:10:54.533791   24645 csi-handler.ts:179] "Attaching" va="a-000000"',
  'I1126 13:10:54.534113   24645 csi-handler.ts:179] "Attaching" va="a-000001"',
  'I1126 13:10:54.587763   24645 csi-handler.ts:200] "Attached" va="a-000001"',
  'I1126 13:10:54.590373   24645 csi-handler.ts:200] "Attached" va="a-000000"',
].join("\n");

const go = [
  'I1126 13:10:54.418559   24702 feature_gate.go:477] "Updated" featureGates={}',
  'I1126 13:10:54.418644   24702 main.go:114] "Version" version="v4.13.0"',
  'I1126 13:10:54.419242   24702 envvar.go:195] "Feature gate default state" feature="WatchListClient" enabled=true',
  'I1126 13:10:54.419253   24702 envvar.go:195] "Feature gate default state" feature="ClientsPreferCBOR" enabled=false',
  'I1126 13:10:54.422092   24702 common.go:143] "Probing CSI driver for readiness"',
  'I1126 13:10:54.425783   24702 main.go:173] "CSI driver name" driver="bench.csi.test"',
  'I1126 13:10:54.427747   24702 main.go:257] "CSI driver supports ControllerPublishUnpublish, using real CSI handler" driver="bench.csi.test"',
  'I1126 13:10:54.441130   24702 reflector.go:507] "Caches populated" type="*v1.CSINode" reflector="k8s.io/client-go@v0.37.0/tools/cache/reflector.go:343"',
  'I1126 13:10:54.451427   24702 reflector.go:507] "Caches populated" type="*v1.PersistentVolume" reflector="k8s.io/client-go@v0.37.0/tools/cache/reflector.go:343"',
  'I1126 13:10:54.441862   24702 reflector.go:507] "Caches populated" type="*v1.VolumeAttachment" reflector="k8s.io/client-go@v0.37.0/tools/cache/reflector.go:343"',
  'I1126 13:10:54.528344   24702 csi_handler.go:264] "Attaching" VolumeAttachment="b-000043"',
  'I1126 13:10:54.561354   24702 csi_handler.go:276] "Attached" VolumeAttachment="b-000043"',
].join("\n");

const watched = { firstAttachedMs: 200, allAttachedMs: 900 };

describe("the cold-start scenario's start-up timeline", () => {
  it("reads ours' marks as ms from exec from the klog headers of its -v=2 lines, the first line of each", () => {
    expect(startupTimeline("ours", ours, execEpochMs, watched)).toEqual({
      flagsParsed: 67.5,
      apiClientMade: 75.3,
      probeStarted: 75.3,
      driverNamed: 99.5,
      capabilitiesKnown: 106.9,
      listedVolumeAttachments: 128,
      listedPersistentVolumes: 132.3,
      listedCsiNodes: 128.8,
      cachesSynced: 132.5,
      firstAttachStarted: 133.8,
      firstPublished: 187.8,
      firstVaAttached: 200,
      allVasAttached: 900,
    });
  });

  it("takes Go's ready as the later of its VA and PV caches populated, and its API client from client-go's feature gate lines", () => {
    const timeline = startupTimeline("go", go, execEpochMs, watched);
    expect({ ready: timeline.cachesSynced, va: timeline.listedVolumeAttachments, client: timeline.apiClientMade, flags: timeline.flagsParsed }).toEqual({ ready: 51.4, va: 41.9, client: 19.2, flags: 18.6 });
  });

  it("gives NaN for a step whose line never came, and for a ready missing one of its two lines", () => {
    const withoutPvs = go.split("\n").filter((line) => !line.includes("*v1.PersistentVolume")).join("\n");
    const timeline = startupTimeline("go", withoutPvs, execEpochMs, {});
    expect([timeline.listedPersistentVolumes, timeline.cachesSynced, timeline.firstVaAttached, timeline.listedCsiNodes]).toEqual([Number.NaN, Number.NaN, Number.NaN, 41.1]);
  });

  it("has one value per mark and mark ids that are unique", () => {
    expect(new Set(startupMarks.map((mark) => mark.id)).size).toBe(startupMarks.length);
    expect(Object.keys(startupTimeline("ours", "", execEpochMs, {}))).toEqual(startupMarks.map((mark) => mark.id));
  });
});
