// The normal behaviour of CSI Identity: who the driver is, what it offers,
// and whether it is ready, all read from the configuration in force.
import { create } from "@bufbuild/protobuf";
import {
  GetPluginCapabilitiesResponseSchema,
  GetPluginInfoResponseSchema,
  ProbeResponseSchema,
  type Identity,
} from "../../../gen/csi/v1/csi_pb";
import { pluginCapabilityNumber } from "./config";
import type { DriverState } from "./driver-state";
import type { ServiceHandlers } from "./service-definitions";

/**
 * createIdentityHandlers returns the fake driver's Identity behaviour. The
 * configuration is read on every call, so POST /config changes what the
 * next call answers (a driver renamed across a restart, say).
 */
export function createIdentityHandlers(state: DriverState): ServiceHandlers<typeof Identity> {
  return {
    getPluginInfo: () =>
      create(GetPluginInfoResponseSchema, {
        name: state.config.name,
        vendorVersion: state.config.vendorVersion,
      }),

    getPluginCapabilities: () =>
      create(GetPluginCapabilitiesResponseSchema, {
        capabilities: state.config.pluginCapabilities.map((name) => ({
          type: { case: "service" as const, value: { type: pluginCapabilityNumber(name) } },
        })),
      }),

    // `ready` is a BoolValue: null in the configuration leaves it unset,
    // which the CSI spec says callers must read as ready.
    probe: () =>
      create(ProbeResponseSchema, state.config.probeReady === null ? {} : { ready: state.config.probeReady }),
  };
}
