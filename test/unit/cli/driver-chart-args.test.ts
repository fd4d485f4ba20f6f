import { describe, expect, it } from "bun:test";
import { parseConfig, type Config } from "../../../src/cli/config";
import { containerArgs, driverChartArgs, expandKubeletReferences } from "../../ground/driver-chart-args";

const socket = "/tmp/test-ground/csi.sock";

// What each chart's list must set; the end-to-end test shows the binary starts with it.
const expected: Readonly<Record<string, Partial<Config>>> = {
  "ebs.csi.aws.com": { csiAddress: socket, timeoutMs: 60_000, verbosity: 2, leaderElection: true, kubeApiQps: 20, kubeApiBurst: 100, workerThreads: 100 },
  "pd.csi.storage.gke.io": {
    csiAddress: socket,
    verbosity: 5,
    httpEndpoint: ":22012",
    leaderElection: true,
    leaderElectionNamespace: "gce-pd-csi-driver",
    timeoutMs: 250_000,
  },
  "disk.csi.azure.com": {
    csiAddress: socket,
    verbosity: 2,
    timeoutMs: 1_200_000,
    leaderElection: true,
    leaderElectionNamespace: "kube-system",
    workerThreads: 1000,
    kubeApiQps: 50,
    kubeApiBurst: 100,
  },
  "driver.longhorn.io": { csiAddress: socket, verbosity: 2, timeoutMs: 110_000, leaderElection: true, leaderElectionNamespace: "longhorn-system", kubeApiQps: 50, kubeApiBurst: 100 },
  "rbd.csi.ceph.com": { csiAddress: socket, verbosity: 1, leaderElection: true, retryIntervalStartMs: 500, defaultFsType: "ext4" },
  "hostpath.csi.k8s.io": { csiAddress: socket, verbosity: 5 },
};

describe("driver charts' csi-attacher args", () => {
  it("cover every chart listed", () => {
    expect(driverChartArgs.map((chart) => chart.driverName).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(driverChartArgs.map((chart) => [chart.driverName, chart] as const))("%s's list reads as the Go sidecar reads it", (driverName, chart) => {
    expect(parseConfig(containerArgs(chart, socket))).toMatchObject(expected[driverName] ?? {});
  });
});

describe("kubelet's $(VAR) expansion", () => {
  it("replaces defined variables, keeps undefined ones and unescapes $$", () => {
    expect(expandKubeletReferences("--a=$(ADDRESS) --b=$(MISSING) --c=$$(ADDRESS) --d=$$", { ADDRESS: "/csi.sock" })).toBe(
      "--a=/csi.sock --b=$(MISSING) --c=$(ADDRESS) --d=$",
    );
  });
});
