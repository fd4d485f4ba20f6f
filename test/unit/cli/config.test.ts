import { describe, expect, it } from "bun:test";
import { parseConfig, type Config } from "../../../src/cli/config";
import { FlagError } from "../../../src/cli/errors";
import { flagTable } from "../../../src/cli/flag-table";

const defaults: Config = {
  kubeconfig: "",
  csiAddress: "/run/csi/socket",
  showVersion: false,
  showHelp: false,
  resyncMs: 600_000,
  timeoutMs: 15_000,
  retryIntervalStartMs: 1000,
  retryIntervalMaxMs: 300_000,
  workerThreads: 10,
  maxEntries: 0,
  defaultFsType: "",
  reconcileSyncMs: 60_000,
  maxGrpcLogLength: -1,
  featureGates: { MutableCSINodeAllocatableCount: false, ReleaseLeaderElectionOnExit: false },
  leaderElection: false,
  leaderElectionNamespace: "",
  leaderElectionLeaseDurationMs: 15_000,
  leaderElectionRenewDeadlineMs: 10_000,
  leaderElectionRetryPeriodMs: 5000,
  leaderElectionLabels: {},
  kubeApiQps: 5,
  kubeApiBurst: 10,
  httpEndpoint: "",
  metricsPath: "/metrics",
  automaxprocs: false,
  loggingFormat: "text",
  logFlushFrequencyMs: 5000,
  verbosity: 0,
  vmodule: [],
  logTextSplitStream: false,
  logTextInfoBufferSize: 0,
  logJsonSplitStream: false,
  logJsonInfoBufferSize: 0,
};

/** failure runs parseConfig expecting a FlagError and returns what main prints and exits with. */
function failure(argv: readonly string[]): { message: string; exitCode: number } {
  try {
    parseConfig(argv);
  } catch (e: unknown) {
    if (e instanceof FlagError) return { message: e.message, exitCode: e.exitCode };
    throw e;
  }
  throw new Error(`${JSON.stringify(argv)} was accepted`);
}

describe("defaults", () => {
  it("are upstream's for every flag when none is given", () => {
    expect(parseConfig([])).toEqual(defaults);
  });

  it("give every Config field exactly one table entry's value (fields shared only by deprecated spellings)", () => {
    const fields: string[] = [...new Set(flagTable.map((flag) => flag.field))];
    expect(fields.sort()).toEqual(Object.keys(defaults).sort());
  });
});

describe("flag forms", () => {
  it.each([
    ["--flag=value", ["--timeout=1m30s"]],
    ["--flag value", ["--timeout", "1m30s"]],
    ["-flag=value", ["-timeout=1m30s"]],
    ["-flag value", ["-timeout", "1m30s"]],
  ])("reads %s", (_form, argv) => {
    expect(parseConfig(argv).timeoutMs).toBe(90_000);
  });

  it.each([
    ["bare --flag", ["--leader-election"], true],
    ["bare -flag", ["-leader-election"], true],
    ["--flag=true", ["--leader-election=true"], true],
    ["--flag=false", ["--leader-election=false"], false],
    ["-flag=1", ["-leader-election=1"], true],
    ["--flag=F", ["--leader-election=F"], false],
  ])("reads a boolean as %s", (_form, argv, expected) => {
    expect(parseConfig(argv).leaderElection).toBe(expected);
  });

  it("never lets a boolean swallow the next argument", () => {
    expect(parseConfig(["--leader-election", "--timeout=2s"])).toMatchObject({ leaderElection: true, timeoutMs: 2000 });
    expect(failure(["--leader-election", "false"])).toEqual({
      message: 'unexpected argument "false": every setting is a --flag, and a boolean takes its value as --flag=false',
      exitCode: 2,
    });
  });

  it("gives a non-boolean flag the next argument even when it starts with a dash, as Go does", () => {
    expect(parseConfig(["--kubeconfig", "-v=5"]).kubeconfig).toBe("-v=5");
  });

  it("keeps the last of a repeated flag", () => {
    expect(parseConfig(["--worker-threads=3", "--worker-threads=7"]).workerThreads).toBe(7);
  });

  it("answers -h, -help and --help alike", () => {
    for (const argv of [["-h"], ["-help"], ["--help"]]) expect(parseConfig(argv).showHelp).toBe(true);
  });

  it("accepts a lone -- at the end", () => {
    expect(parseConfig(["-v=2", "--"]).verbosity).toBe(2);
  });

  it("reads an empty value after = as empty", () => {
    expect(parseConfig(["--default-fstype="]).defaultFsType).toBe("");
  });
});

describe("each kind", () => {
  it.each<[string, readonly string[], Partial<Config>]>([
    ["string, unix:// stripped from the socket", ["--csi-address=unix:///csi/csi.sock"], { csiAddress: "/csi/csi.sock" }],
    ["string, a path kept", ["--csi-address=/var/lib/csi/sockets/pluginproxy/csi.sock"], { csiAddress: "/var/lib/csi/sockets/pluginproxy/csi.sock" }],
    ["duration", ["--resync=1h", "--reconcile-sync=500ms", "--retry-interval-start=1.5s"], { resyncMs: 3_600_000, reconcileSyncMs: 500, retryIntervalStartMs: 1500 }],
    ["duration 0 for no resync", ["--resync=0"], { resyncMs: 0 }],
    ["uint", ["--worker-threads=100"], { workerThreads: 100 }],
    ["int, negative", ["--max-grpc-log-length=-1", "--kube-api-burst=0x20"], { maxGrpcLogLength: -1, kubeApiBurst: 32 }],
    ["float", ["--kube-api-qps=12.5"], { kubeApiQps: 12.5 }],
    ["float written as an integer", ["--kube-api-qps=50"], { kubeApiQps: 50 }],
    ["verbosity", ["-v=5"], { verbosity: 5 }],
    ["verbosity as --v", ["--v", "2"], { verbosity: 2 }],
    ["picklist", ["--logging-format=json"], { loggingFormat: "json" }],
    ["vmodule", ["--vmodule=attach*=5,reflector=2"], { vmodule: [{ pattern: "attach*", verbosity: 5 }, { pattern: "reflector", verbosity: 2 }] }],
    ["alpha logging options at their defaults", ["--log-json-split-stream=false", "--log-text-info-buffer-size=0"], { logJsonSplitStream: false, logTextInfoBufferSize: 0 }],
    ["automaxprocs", ["--automaxprocs"], { automaxprocs: true }],
  ])("reads %s", (_kind, argv, expected) => {
    expect(parseConfig(argv)).toEqual({ ...defaults, ...expected });
  });
});

describe("leader election labels", () => {
  it("reads key:value pairs, and adds up repeated flags", () => {
    expect(parseConfig(["--leader-election-labels=app:attacher,tier:storage", "--leader-election-labels=zone:a"]).leaderElectionLabels).toEqual({
      app: "attacher",
      tier: "storage",
      zone: "a",
    });
  });

  it.each([
    ["a:b,c", '"c"'],
    ["a=b", '"a=b"'],
    ["a:b:c", '"a:b:c"'],
    ["", '""'],
  ])("rejects %p as upstream does", (text, item) => {
    expect(failure([`--leader-election-labels=${text}`])).toEqual({
      message: `invalid value ${JSON.stringify(text)} for flag --leader-election-labels: malformed item in list of labels: ${item}; use key:value,key2:value2`,
      exitCode: 2,
    });
  });
});

describe("feature gates", () => {
  it("resolves every known gate from the settings given", () => {
    expect(parseConfig(["--feature-gates=ReleaseLeaderElectionOnExit=true"]).featureGates).toEqual({
      MutableCSINodeAllocatableCount: false,
      ReleaseLeaderElectionOnExit: true,
    });
  });

  it("adds up pairs over repeated flags, the last setting of a gate winning", () => {
    expect(parseConfig(["--feature-gates=ReleaseLeaderElectionOnExit=true,MutableCSINodeAllocatableCount=true", "--feature-gates=ReleaseLeaderElectionOnExit=false"]).featureGates).toEqual({
      MutableCSINodeAllocatableCount: true,
      ReleaseLeaderElectionOnExit: false,
    });
  });

  it("lets AllAlpha and AllBeta set the gates of their stage that are not named", () => {
    expect(parseConfig(["--feature-gates=AllAlpha=true"]).featureGates).toEqual({ MutableCSINodeAllocatableCount: false, ReleaseLeaderElectionOnExit: true });
    expect(parseConfig(["--feature-gates=AllBeta=true,MutableCSINodeAllocatableCount=false"]).featureGates).toEqual({
      MutableCSINodeAllocatableCount: false,
      ReleaseLeaderElectionOnExit: false,
    });
  });

  it("rejects an unknown gate naming it and the known ones (exit 1, as upstream's SetFromMap)", () => {
    expect(failure(["--feature-gates=Topology=true"])).toEqual({
      message:
        'invalid value "Topology=true" for flag --feature-gates: unrecognized feature gate: Topology; known gates are AllAlpha, AllBeta, MutableCSINodeAllocatableCount, ReleaseLeaderElectionOnExit',
      exitCode: 1,
    });
  });

  it.each([
    ["ReleaseLeaderElectionOnExit", 'malformed pair "ReleaseLeaderElectionOnExit"; use Name=true or Name=false'],
    ["ReleaseLeaderElectionOnExit=yes", '"ReleaseLeaderElectionOnExit=yes": not a boolean; use true or false'],
  ])("rejects the malformed %p (exit 2, a parse error in Go)", (text, reason) => {
    expect(failure([`--feature-gates=${text}`])).toEqual({ message: `invalid value ${JSON.stringify(text)} for flag --feature-gates: ${reason}`, exitCode: 2 });
  });
});

describe("--http-endpoint and the deprecated --metrics-address", () => {
  it.each<[readonly string[], string]>([
    [["--http-endpoint=:8080"], ":8080"],
    [["--metrics-address=:8081"], ":8081"],
    [["--http-endpoint=", "--metrics-address=:8081"], ":8081"],
    [["--metrics-address=", "--http-endpoint=:8080"], ":8080"],
  ])("%p sets httpEndpoint to %p", (argv, endpoint) => {
    expect(parseConfig(argv).httpEndpoint).toBe(endpoint);
  });

  it("refuses both at once", () => {
    expect(failure(["--metrics-address=:8081", "--http-endpoint=:8080"])).toEqual({
      message: 'only one of --http-endpoint (":8080") and --metrics-address (":8081") can be set',
      exitCode: 1,
    });
  });
});

describe("bad values", () => {
  it.each<[readonly string[], string, number]>([
    // Go's flag package cannot read the value: exit 2.
    [["--timeout=15"], 'invalid value "15" for flag --timeout: not a duration; use Go syntax such as 15s, 1m30s or 500ms', 2],
    [["--worker-threads=ten"], 'invalid value "ten" for flag --worker-threads: not a whole number of 0 or more', 2],
    [["--worker-threads=-1"], 'invalid value "-1" for flag --worker-threads: not a whole number of 0 or more', 2],
    [["--kube-api-burst=1.5"], 'invalid value "1.5" for flag --kube-api-burst: not a whole number', 2],
    [["--kube-api-qps=fast"], 'invalid value "fast" for flag --kube-api-qps: not a number', 2],
    [["--leader-election=yes"], 'invalid value "yes" for flag --leader-election: not a boolean; use true or false', 2],
    [["-v=-1"], 'invalid value "-1" for flag --v: not a verbosity level; use a whole number from 0', 2],
    [["--vmodule=attach"], 'invalid value "attach" for flag --vmodule: "attach" does not have the pattern=N format', 2],
    [["--log-json-info-buffer-size=lots"], 'invalid value "lots" for flag --log-json-info-buffer-size: not a quantity; use bytes (512), multiples of 1000 (1K) or of 1024 (2Ki)', 2],
    // Read fine, refused by the checks upstream's main() makes afterwards: exit 1.
    [["--worker-threads=0"], 'invalid value "0" for flag --worker-threads: must be greater than zero', 1],
    [["--logging-format=yaml"], 'invalid value "yaml" for flag --logging-format: unsupported log format; permitted formats are "json" and "text"', 1],
    [["--timeout=0s"], 'invalid value "0s" for flag --timeout: must be greater than zero', 1],
    [["--resync=-1m"], 'invalid value "-1m" for flag --resync: must be 0 (no resync) or more', 1],
    [["--max-entries=-5"], 'invalid value "-5" for flag --max-entries: must be 0 (no limit) or more', 1],
    [["--kube-api-burst=-1"], 'invalid value "-1" for flag --kube-api-burst: must be 0 (the default of 10) or more', 1],
    [["--csi-address="], 'invalid value "" for flag --csi-address: must name the CSI driver\'s Unix socket', 1],
    [["--metrics-path=metrics"], 'invalid value "metrics" for flag --metrics-path: must be an HTTP path starting with "/"', 1],
    [["--log-text-split-stream"], 'invalid value "true" for flag --log-text-split-stream: must be left at its default: the LoggingAlphaOptions feature is disabled', 1],
    [["--log-json-info-buffer-size=2Ki"], 'invalid value "2Ki" for flag --log-json-info-buffer-size: must be left at its default: the LoggingAlphaOptions feature is disabled', 1],
    [["--vmodule=a=1", "--logging-format=json"], 'invalid value "a=1" for flag --vmodule: only supported for text log format', 1],
    [["--retry-interval-start=10s", "--retry-interval-max=1s"], 'invalid value "1s" for flag --retry-interval-max: shorter than --retry-interval-start 10s', 1],
    [
      ["--leader-election", "--leader-election-lease-duration=10s"],
      'invalid value "10s" for flag --leader-election-lease-duration: must be longer than --leader-election-renew-deadline 10s',
      1,
    ],
    [
      ["--leader-election", "--leader-election-retry-period=9s"],
      'invalid value "10s" for flag --leader-election-renew-deadline: must be longer than 1.2 x --leader-election-retry-period 9s',
      1,
    ],
  ])("%p stops start-up with one line naming it", (argv, message, exitCode) => {
    expect(failure(argv)).toEqual({ message, exitCode });
    expect(message).not.toContain("\n");
  });
});

describe("leader election timings", () => {
  it("are only checked against each other when leader election is on, as client-go checks them when it starts", () => {
    expect(parseConfig(["--leader-election-lease-duration=5s"]).leaderElectionLeaseDurationMs).toBe(5000);
    expect(parseConfig(["--leader-election", "--leader-election-lease-duration=30s", "--leader-election-renew-deadline=20s", "--leader-election-retry-period=10s"])).toMatchObject({
      leaderElectionLeaseDurationMs: 30_000,
      leaderElectionRenewDeadlineMs: 20_000,
      leaderElectionRetryPeriodMs: 10_000,
    });
  });
});

describe("the command line itself", () => {
  it.each<[readonly string[], string]>([
    [["--no-such-flag=1"], "flag provided but not defined: --no-such-flag (--help lists the flags)"],
    [["--logtostderr"], "flag provided but not defined: --logtostderr (--help lists the flags)"],
    [["stray"], 'unexpected argument "stray": every setting is a --flag, and a boolean takes its value as --flag=false'],
    [["--", "stray"], 'unexpected argument "stray": every setting is a --flag, and a boolean takes its value as --flag=false'],
    [["--timeout"], "flag needs an argument: --timeout"],
    [["---timeout=1s"], "bad flag syntax: ---timeout=1s"],
    [["-=1"], "bad flag syntax: -=1"],
  ])("%p is refused with exit 2, as Go's flag package does", (argv, message) => {
    expect(failure(argv)).toEqual({ message, exitCode: 2 });
  });
});
