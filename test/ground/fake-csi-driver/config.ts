// The fake driver's configuration: what it says it is and can do, and how
// strict it is. Set at launch (--config JSON, --name) and changed at run time
// through POST /config; both paths go through resolveDriverConfig.
import * as v from "valibot";
import {
  ControllerServiceCapability_RPC_Type,
  PluginCapability_Service_Type,
} from "../../../gen/csi/v1/csi_pb";

/** PluginCapabilityName is a CSI plugin service capability, e.g. "CONTROLLER_SERVICE". */
export type PluginCapabilityName = keyof typeof PluginCapability_Service_Type;

/** ControllerCapabilityName is a CSI controller RPC capability, e.g. "PUBLISH_UNPUBLISH_VOLUME". */
export type ControllerCapabilityName = keyof typeof ControllerServiceCapability_RPC_Type;

/** DEFAULT_DRIVER_NAME is the name the fake driver reports unless told otherwise. */
export const DEFAULT_DRIVER_NAME = "fake.csi.test";

/**
 * DriverConfigSchema validates a whole configuration and fills defaults.
 * It is strict so that a misspelt key in a test fails loudly instead of
 * leaving the default in place.
 */
export const DriverConfigSchema = v.strictObject({
  /** Name from GetPluginInfo; default "fake.csi.test". */
  name: v.optional(v.pipe(v.string(), v.minLength(1)), DEFAULT_DRIVER_NAME),
  /** Vendor version from GetPluginInfo; default "0.0.0-fake". */
  vendorVersion: v.optional(v.string(), "0.0.0-fake"),
  /** Services from GetPluginCapabilities; default ["CONTROLLER_SERVICE"]. */
  pluginCapabilities: v.optional(
    v.array(v.custom<PluginCapabilityName>(isPluginCapabilityName, "not a plugin capability")),
    () => ["CONTROLLER_SERVICE" as const],
  ),
  /** RPCs from ControllerGetCapabilities; default ["PUBLISH_UNPUBLISH_VOLUME"]. */
  controllerCapabilities: v.optional(
    v.array(v.custom<ControllerCapabilityName>(isControllerCapabilityName, "not a controller capability")),
    () => ["PUBLISH_UNPUBLISH_VOLUME" as const],
  ),
  /**
   * Node IDs that exist; ControllerPublishVolume to any other answers
   * NotFound. Default null: every node ID exists.
   */
  nodeIds: v.optional(v.nullable(v.array(v.string())), null),
  /**
   * Publish context returned by ControllerPublishVolume; "{volumeId}" and
   * "{nodeId}" in values are replaced. Default { devicePath: "/dev/fake/{volumeId}" }.
   */
  publishContext: v.optional(v.record(v.string(), v.string()), () => ({ devicePath: "/dev/fake/{volumeId}" })),
  /**
   * Make ControllerPublishVolume answer NotFound for a volume that was not
   * created (CreateVolume or POST /volumes) first. Default false: publishing
   * creates the volume, so tests need no set-up call.
   */
  requireCreatedVolumes: v.optional(v.boolean(), false),
  /**
   * Answer Unimplemented to controller RPCs whose capability is not
   * advertised, as a strict driver would, to catch a caller that ignores
   * capabilities. Default false.
   */
  enforceCapabilities: v.optional(v.boolean(), false),
  /**
   * Largest request the gRPC server accepts, in bytes, as grpc-go's and
   * grpc-js's max receive message length (both default to 4 MiB). A bigger
   * request fails with RESOURCE_EXHAUSTED before any handler runs, so it is
   * not in the call log. Read at launch only. Default null: grpc-js's default.
   */
  maxReceiveMessageBytes: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))), null),
  /**
   * Directory where the volume table is saved after every call that
   * changed it (and loaded from at launch), and every finished call is
   * appended to `calls.jsonl` (see state-dir.ts): a driver restarted on
   * the same directory keeps its volumes, as a real driver's backend does.
   * Read at launch only. Default null: state lives and dies with the process.
   */
  stateDir: v.optional(v.nullable(v.string()), null),
  /**
   * Most call records the log keeps; older ones are dropped as new calls
   * arrive. Default null: every call is kept (tests read the whole log).
   */
  callLogLimit: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))), null),
  /** Probe's ready field: true, false, or null for absent. Default true. */
  probeReady: v.optional(v.nullable(v.boolean()), true),
});

/** DriverConfig is a complete configuration, every default filled in. */
export type DriverConfig = v.InferOutput<typeof DriverConfigSchema>;

/** DriverConfigPatch is a partial configuration as tests write it: omitted keys keep their value. */
export type DriverConfigPatch = v.InferInput<typeof DriverConfigSchema>;

/** InvalidConfigError says why a configuration (from the command line or POST /config) was refused. */
export class InvalidConfigError extends Error {
  override name = "InvalidConfigError";
}

/**
 * resolveDriverConfig fills defaults into a patch laid over a base
 * configuration (none at launch, the current one for POST /config), so
 * that both paths validate the same way.
 */
export function resolveDriverConfig(patch: unknown, base?: DriverConfig): DriverConfig {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) {
    throw new InvalidConfigError("configuration must be a JSON object");
  }
  const result = v.safeParse(DriverConfigSchema, { ...base, ...patch });
  if (!result.success) {
    throw new InvalidConfigError(`invalid configuration: ${v.summarize(result.issues)}`);
  }
  return result.output;
}

/** pluginCapabilityNumber maps a capability name to its enum value for the response. */
export function pluginCapabilityNumber(name: PluginCapabilityName): PluginCapability_Service_Type {
  return PluginCapability_Service_Type[name];
}

/** controllerCapabilityNumber maps a capability name to its enum value for the response. */
export function controllerCapabilityNumber(name: ControllerCapabilityName): ControllerServiceCapability_RPC_Type {
  return ControllerServiceCapability_RPC_Type[name];
}

function isPluginCapabilityName(input: unknown): boolean {
  return typeof input === "string" && Object.hasOwn(PluginCapability_Service_Type, input) && Number.isNaN(Number(input));
}

function isControllerCapabilityName(input: unknown): boolean {
  return (
    typeof input === "string" && Object.hasOwn(ControllerServiceCapability_RPC_Type, input) && Number.isNaN(Number(input))
  );
}
