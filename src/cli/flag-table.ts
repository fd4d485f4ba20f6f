import * as v from "valibot";
import { featureGatesHelp, knownFeatureGateNames, resolveFeatureGates, unknownFeatureGate } from "./feature-gates";
import {
  boolKind,
  durationKind,
  floatKind,
  intKind,
  keyBoolMapKind,
  labelsKind,
  quantityKind,
  stringKind,
  uintKind,
  verbosityKind,
  vmoduleKind,
} from "./flag-kinds";
import { defineFlag, type SomeFlag } from "./flag-definition";
import { csiSocketAddress, positiveDuration } from "./shared-flag-schemas";

const anyString = v.string();
const anyBool = v.boolean();
const anyInteger = v.pipe(v.number(), v.integer());
// component-base refuses LoggingAlphaOptions settings unless that gate is on, and upstream never turns it on.
const alphaLoggingOff = "must be left at its default: the LoggingAlphaOptions feature is disabled";

/**
 * flagTable lists every flag upstream csi-attacher v4.13.0 registers: its own
 * (cmd/csi-attacher/main.go), csi-lib-utils' standardflags (common sidecar
 * flags and --automaxprocs) and component-base's logging flags.
 */
export const flagTable = [
  defineFlag({
    name: "kubeconfig",
    field: "kubeconfig",
    kind: stringKind,
    defaultValue: "",
    help: "Absolute path to the kubeconfig file. Required only when running out of cluster.",
    schema: anyString,
  }),
  defineFlag({
    name: "csi-address",
    field: "csiAddress",
    kind: stringKind,
    defaultValue: "/run/csi/socket",
    help: "Address of the CSI driver socket.",
    schema: csiSocketAddress,
  }),
  defineFlag({ name: "version", field: "showVersion", kind: boolKind, defaultValue: false, help: "Show version.", schema: anyBool }),
  defineFlag({ name: "help", aliases: ["h"], field: "showHelp", kind: boolKind, defaultValue: false, help: "Show this help and exit.", schema: anyBool }),
  defineFlag({
    name: "resync",
    field: "resyncMs",
    kind: durationKind,
    defaultValue: 600_000,
    help: "Resync interval of the controller.",
    // As for client-go's informers, 0 turns the periodic resync off.
    schema: v.pipe(v.number(), v.minValue(0, "must be 0 (no resync) or more")),
  }),
  defineFlag({
    name: "timeout",
    field: "timeoutMs",
    kind: durationKind,
    defaultValue: 15_000,
    help: "Timeout for waiting for attaching or detaching the volume.",
    schema: positiveDuration,
  }),
  defineFlag({
    name: "retry-interval-start",
    field: "retryIntervalStartMs",
    kind: durationKind,
    defaultValue: 1000,
    help: "Initial retry interval of failed provisioning or deletion. It doubles with each failure, up to retry-interval-max.",
    schema: positiveDuration,
  }),
  defineFlag({
    name: "retry-interval-max",
    field: "retryIntervalMaxMs",
    kind: durationKind,
    defaultValue: 300_000,
    help: "Maximum retry interval of failed provisioning or deletion.",
    schema: positiveDuration,
  }),
  defineFlag({
    name: "worker-threads",
    field: "workerThreads",
    kind: uintKind,
    defaultValue: 10,
    help: "Number of attacher worker threads",
    schema: v.pipe(v.number(), v.minValue(1, "must be greater than zero")),
  }),
  defineFlag({
    name: "max-entries",
    field: "maxEntries",
    kind: intKind,
    defaultValue: 0,
    help: "Max entries per each page in volume lister call, 0 means no limit.",
    schema: v.pipe(v.number(), v.minValue(0, "must be 0 (no limit) or more")),
  }),
  defineFlag({
    name: "default-fstype",
    field: "defaultFsType",
    kind: stringKind,
    defaultValue: "",
    help: "The default filesystem type of the volume to publish. Defaults to empty string",
    schema: anyString,
  }),
  defineFlag({
    name: "reconcile-sync",
    field: "reconcileSyncMs",
    kind: durationKind,
    defaultValue: 60_000,
    help: "Resync interval of the VolumeAttachment reconciler.",
    schema: positiveDuration,
  }),
  defineFlag({
    name: "max-grpc-log-length",
    field: "maxGrpcLogLength",
    kind: intKind,
    defaultValue: -1,
    help: "The maximum amount of characters logged for every grpc responses. Defaults to no limit",
    // Any negative number means no limit, as upstream.
    schema: anyInteger,
  }),
  defineFlag({
    name: "feature-gates",
    field: "featureGates",
    kind: keyBoolMapKind,
    defaultValue: {},
    help: `A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:\n${featureGatesHelp()}`,
    schema: v.pipe(
      v.record(v.string(), v.boolean()),
      v.check(
        (settings) => unknownFeatureGate(settings) === undefined,
        (issue) => `unrecognized feature gate: ${unknownFeatureGate(issue.input as Record<string, boolean>)}; known gates are ${knownFeatureGateNames.join(", ")}`,
      ),
      v.transform(resolveFeatureGates),
    ),
  }),
  defineFlag({ name: "leader-election", field: "leaderElection", kind: boolKind, defaultValue: false, help: "Enable leader election.", schema: anyBool }),
  defineFlag({
    name: "leader-election-namespace",
    field: "leaderElectionNamespace",
    kind: stringKind,
    defaultValue: "",
    help: "Namespace where the leader election resource lives. Defaults to the pod namespace if not set.",
    schema: anyString,
  }),
  defineFlag({
    name: "leader-election-lease-duration",
    field: "leaderElectionLeaseDurationMs",
    kind: durationKind,
    defaultValue: 15_000,
    help: "Duration, in seconds, that non-leader candidates will wait to force acquire leadership. Defaults to 15 seconds.",
    schema: positiveDuration,
  }),
  defineFlag({
    name: "leader-election-renew-deadline",
    field: "leaderElectionRenewDeadlineMs",
    kind: durationKind,
    defaultValue: 10_000,
    help: "Duration, in seconds, that the acting leader will retry refreshing leadership before giving up. Defaults to 10 seconds.",
    schema: positiveDuration,
  }),
  defineFlag({
    name: "leader-election-retry-period",
    field: "leaderElectionRetryPeriodMs",
    kind: durationKind,
    defaultValue: 5000,
    help: "Duration, in seconds, the LeaderElector clients should wait between tries of actions. Defaults to 5 seconds.",
    schema: positiveDuration,
  }),
  defineFlag({
    name: "leader-election-labels",
    field: "leaderElectionLabels",
    kind: labelsKind,
    defaultValue: {},
    help: "List of labels to add to lease when given replica becomes leader. Formatted as a comma seperated list of key:value labels. Example: 'my-label:my-value,my-second-label:my-second-value'",
    schema: v.pipe(v.record(v.string(), v.string()), v.readonly()),
  }),
  defineFlag({
    name: "kube-api-qps",
    field: "kubeApiQps",
    kind: floatKind,
    defaultValue: 5,
    help: "QPS to use while communicating with the kubernetes apiserver. Defaults to 5.0.",
    schema: v.pipe(v.number(), v.finite()),
  }),
  defineFlag({
    name: "kube-api-burst",
    field: "kubeApiBurst",
    kind: intKind,
    defaultValue: 10,
    help: "Burst to use while communicating with the kubernetes apiserver. Defaults to 10.",
    // 0 means client-go's default of 10; a negative burst would fail every request.
    schema: v.pipe(v.number(), v.integer(), v.minValue(0, "must be 0 (the default of 10) or more")),
  }),
  defineFlag({
    name: "http-endpoint",
    field: "httpEndpoint",
    kind: stringKind,
    defaultValue: "",
    help: "The TCP network address where the HTTP server for diagnostics, including metrics and leader election health check, will listen (example: `:8080`). The default is empty string, which means the server is disabled. Only one of `--metrics-address` and `--http-endpoint` can be set.",
    schema: anyString,
  }),
  defineFlag({
    name: "metrics-address",
    field: "httpEndpoint",
    kind: stringKind,
    defaultValue: "",
    help: "(deprecated) The TCP network address where the prometheus metrics endpoint will listen (example: `:8080`). The default is empty string, which means metrics endpoint is disabled. Only one of `--metrics-address` and `--http-endpoint` can be set.",
    schema: anyString,
  }),
  defineFlag({
    name: "metrics-path",
    field: "metricsPath",
    kind: stringKind,
    defaultValue: "/metrics",
    help: "The HTTP path where prometheus metrics will be exposed. Default is `/metrics`.",
    schema: v.pipe(v.string(), v.startsWith("/", 'must be an HTTP path starting with "/"')),
  }),
  defineFlag({
    name: "automaxprocs",
    field: "automaxprocs",
    kind: boolKind,
    defaultValue: false,
    help: "automatically set GOMAXPROCS to match Linux container CPU quota (accepted for compatibility; no effect under Bun)",
    schema: anyBool,
  }),
  defineFlag({
    name: "logging-format",
    field: "loggingFormat",
    kind: stringKind,
    defaultValue: "text",
    help: 'Sets the log format. Permitted formats: "json", "text".',
    schema: v.picklist(["text", "json"], 'unsupported log format; permitted formats are "json" and "text"'),
  }),
  defineFlag({
    name: "log-flush-frequency",
    field: "logFlushFrequencyMs",
    kind: durationKind,
    defaultValue: 5000,
    help: "Maximum number of seconds between log flushes",
    schema: positiveDuration,
  }),
  defineFlag({ name: "v", field: "verbosity", kind: verbosityKind, defaultValue: 0, help: "number for the log level verbosity", schema: anyInteger }),
  defineFlag({
    name: "vmodule",
    field: "vmodule",
    kind: vmoduleKind,
    defaultValue: [],
    help: "comma-separated list of pattern=N settings for file-filtered logging (only works for text log format)",
    schema: v.pipe(v.array(v.object({ pattern: v.string(), verbosity: v.number() })), v.readonly()),
  }),
  defineFlag({
    name: "log-text-split-stream",
    field: "logTextSplitStream",
    kind: boolKind,
    defaultValue: false,
    help: "[Alpha] In text format, write error messages to stderr and info messages to stdout. The default is to write a single stream to stdout. Enable the LoggingAlphaOptions feature gate to use this.",
    schema: v.literal(false, alphaLoggingOff),
  }),
  defineFlag({
    name: "log-text-info-buffer-size",
    field: "logTextInfoBufferSize",
    kind: quantityKind,
    defaultValue: 0,
    help: "[Alpha] In text format with split output streams, the info messages can be buffered for a while to increase performance. The default value of zero bytes disables buffering. The size can be specified as number of bytes (512), multiples of 1000 (1K), multiples of 1024 (2Ki), or powers of those (3M, 4G, 5Mi, 6Gi). Enable the LoggingAlphaOptions feature gate to use this.",
    schema: v.literal(0, alphaLoggingOff),
  }),
  defineFlag({
    name: "log-json-split-stream",
    field: "logJsonSplitStream",
    kind: boolKind,
    defaultValue: false,
    help: "[Alpha] In JSON format, write error messages to stderr and info messages to stdout. The default is to write a single stream to stdout. Enable the LoggingAlphaOptions feature gate to use this.",
    schema: v.literal(false, alphaLoggingOff),
  }),
  defineFlag({
    name: "log-json-info-buffer-size",
    field: "logJsonInfoBufferSize",
    kind: quantityKind,
    defaultValue: 0,
    help: "[Alpha] In JSON format with split output streams, the info messages can be buffered for a while to increase performance. The default value of zero bytes disables buffering. The size can be specified as number of bytes (512), multiples of 1000 (1K), multiples of 1024 (2Ki), or powers of those (3M, 4G, 5Mi, 6Gi). Enable the LoggingAlphaOptions feature gate to use this.",
    schema: v.literal(0, alphaLoggingOff),
  }),
] as const;

/** AnyFlag is any entry of the table with its precise types (what Config is derived from). */
export type AnyFlag = (typeof flagTable)[number];

/** flags is the table for loops that read, validate or print every entry alike. */
export const flags: readonly SomeFlag[] = flagTable;
