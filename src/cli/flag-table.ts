/**
 * The attacher's command-line flags: names, kinds, defaults and help as the
 * upstream csi-attacher declares them, so a Deployment written for the Go
 * sidecar starts this one unchanged.
 */
export type FlagKind = "string" | "duration" | "int" | "bool";

export interface FlagDefinition {
  readonly name: string;
  readonly kind: FlagKind;
  /** The default as the user would write it (durations in Go syntax). */
  readonly defaultValue: string;
  readonly help: string;
}

export const flagTable: readonly FlagDefinition[] = [
  { name: "csi-address", kind: "string", defaultValue: "/run/csi/socket", help: "Address of the CSI driver socket." },
  { name: "kubeconfig", kind: "string", defaultValue: "", help: "Absolute path to the kubeconfig file. Required only when running out of cluster." },
  { name: "resync", kind: "duration", defaultValue: "10m", help: "Resync interval of the controller." },
  { name: "timeout", kind: "duration", defaultValue: "15s", help: "Timeout for waiting for attaching or detaching the volume." },
  { name: "retry-interval-start", kind: "duration", defaultValue: "1s", help: "Initial retry interval of failed create volume or deletion. It doubles with each failure, up to retry-interval-max." },
  { name: "retry-interval-max", kind: "duration", defaultValue: "5m", help: "Maximum retry interval of failed create volume or deletion." },
  { name: "worker-threads", kind: "int", defaultValue: "10", help: "Number of attacher worker threads." },
  { name: "default-fstype", kind: "string", defaultValue: "", help: "The default filesystem type of the volume to publish. Defaults to empty string." },
  { name: "logging-format", kind: "string", defaultValue: "text", help: "Sets the log format. Permitted formats: \"json\", \"text\"." },
  { name: "v", kind: "int", defaultValue: "0", help: "Number for the log level verbosity." },
  { name: "version", kind: "bool", defaultValue: "false", help: "Show version." },
  { name: "help", kind: "bool", defaultValue: "false", help: "Show this help." },
];

export const flagsByName: ReadonlyMap<string, FlagDefinition> = new Map(flagTable.map((flag) => [flag.name, flag]));
