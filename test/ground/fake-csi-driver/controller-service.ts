// The normal behaviour of CSI Controller, as a correct driver answers:
// publish and unpublish are idempotent, errors carry the codes the CSI
// spec assigns (NotFound for an unknown node, Aborted for a stale token).
import { create } from "@bufbuild/protobuf";
import {
  ControllerGetCapabilitiesResponseSchema,
  ControllerPublishVolumeResponseSchema,
  ControllerUnpublishVolumeResponseSchema,
  CreateVolumeResponseSchema,
  DeleteVolumeResponseSchema,
  ListVolumesResponseSchema,
  type Controller,
  type ListVolumesRequest,
} from "../../../gen/csi/v1/csi_pb";
import { controllerCapabilityNumber, type ControllerCapabilityName } from "./config";
import type { DriverState } from "./driver-state";
import { Code, CsiStatusError } from "./errors";
import type { ServiceHandlers } from "./service-definitions";
import { DEFAULT_CAPACITY_BYTES } from "./volume-table";

/**
 * createControllerHandlers returns the fake driver's Controller behaviour,
 * acting on the state's volume table under the configuration in force.
 */
export function createControllerHandlers(state: DriverState): ServiceHandlers<typeof Controller> {
  const requireCapability = (name: ControllerCapabilityName, method: string): void => {
    if (state.config.enforceCapabilities && !state.config.controllerCapabilities.includes(name)) {
      throw new CsiStatusError(Code.Unimplemented, `${method} needs capability ${name}, which this driver does not advertise`);
    }
  };

  return {
    controllerGetCapabilities: () =>
      create(ControllerGetCapabilitiesResponseSchema, {
        capabilities: state.config.controllerCapabilities.map((name) => ({
          type: { case: "rpc" as const, value: { type: controllerCapabilityNumber(name) } },
        })),
      }),

    createVolume: (request) => {
      requireCapability("CREATE_DELETE_VOLUME", "CreateVolume");
      requireField(request.name, "name");
      // The volume id is the name, so tests know it without reading the response.
      const required = request.capacityRange?.requiredBytes ?? 0n;
      const volume = state.volumes.create(request.name, required > 0n ? required : DEFAULT_CAPACITY_BYTES, request.parameters);
      return create(CreateVolumeResponseSchema, {
        volume: { volumeId: volume.volumeId, capacityBytes: volume.capacityBytes, volumeContext: volume.parameters },
      });
    },

    deleteVolume: (request) => {
      requireCapability("CREATE_DELETE_VOLUME", "DeleteVolume");
      requireField(request.volumeId, "volume_id");
      const volume = state.volumes.get(request.volumeId);
      // The spec lets a driver refuse to delete a published volume; doing so
      // catches callers that delete before unpublishing.
      if (volume !== undefined && volume.nodeIds.length > 0) {
        throw new CsiStatusError(
          Code.FailedPrecondition,
          `volume ${request.volumeId} is still published to ${volume.nodeIds.join(", ")}`,
        );
      }
      state.volumes.delete(request.volumeId);
      return create(DeleteVolumeResponseSchema);
    },

    controllerPublishVolume: (request) => {
      requireCapability("PUBLISH_UNPUBLISH_VOLUME", "ControllerPublishVolume");
      requireField(request.volumeId, "volume_id");
      requireField(request.nodeId, "node_id");
      if (request.volumeCapability === undefined) {
        throw new CsiStatusError(Code.InvalidArgument, "volume_capability is required");
      }
      const { nodeIds, requireCreatedVolumes, publishContext } = state.config;
      if (nodeIds !== null && !nodeIds.includes(request.nodeId)) {
        throw new CsiStatusError(Code.NotFound, `node ${request.nodeId} not found`);
      }
      if (requireCreatedVolumes && !state.volumes.has(request.volumeId)) {
        throw new CsiStatusError(Code.NotFound, `volume ${request.volumeId} not found`);
      }
      // Publishing again to the same node is a no-op that answers the same context.
      state.volumes.publish(request.volumeId, request.nodeId);
      return create(ControllerPublishVolumeResponseSchema, {
        publishContext: renderPublishContext(publishContext, request.volumeId, request.nodeId),
      });
    },

    controllerUnpublishVolume: (request) => {
      requireCapability("PUBLISH_UNPUBLISH_VOLUME", "ControllerUnpublishVolume");
      requireField(request.volumeId, "volume_id");
      // An unknown volume or node is already unpublished: the spec asks for
      // OK so a caller retrying after a lost reply makes progress.
      const nodeIds = request.nodeId === "" ? (state.volumes.get(request.volumeId)?.nodeIds ?? []) : [request.nodeId];
      for (const nodeId of nodeIds) {
        state.volumes.unpublish(request.volumeId, nodeId);
      }
      return create(ControllerUnpublishVolumeResponseSchema);
    },

    listVolumes: (request) => {
      requireCapability("LIST_VOLUMES", "ListVolumes");
      if (request.maxEntries < 0) {
        throw new CsiStatusError(Code.InvalidArgument, "max_entries must not be negative");
      }
      const page = state.volumes.page(parseStartingToken(request, state), request.maxEntries);
      return create(ListVolumesResponseSchema, {
        entries: page.volumes.map((volume) => ({
          volume: { volumeId: volume.volumeId, capacityBytes: volume.capacityBytes, volumeContext: volume.parameters },
          status: { publishedNodeIds: [...volume.nodeIds] },
        })),
        nextToken: page.nextOffset === undefined ? "" : String(page.nextOffset),
      });
    },
  };
}

/**
 * parseStartingToken reads a ListVolumes token, which is the decimal offset
 * of the page's first volume. A token this driver could not have issued is
 * ABORTED, the code the CSI spec gives an invalid starting_token.
 */
function parseStartingToken(request: ListVolumesRequest, state: DriverState): number {
  if (request.startingToken === "") {
    return 0;
  }
  const offset = /^\d+$/.test(request.startingToken) ? Number(request.startingToken) : Number.NaN;
  if (!state.volumes.isValidOffset(offset)) {
    throw new CsiStatusError(Code.Aborted, `invalid starting_token ${JSON.stringify(request.startingToken)}`);
  }
  return offset;
}

function renderPublishContext(template: Record<string, string>, volumeId: string, nodeId: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(template).map(([key, value]) => [
      key,
      value.replaceAll("{volumeId}", volumeId).replaceAll("{nodeId}", nodeId),
    ]),
  );
}

function requireField(value: string, name: string): void {
  if (value === "") {
    throw new CsiStatusError(Code.InvalidArgument, `${name} is required`);
  }
}
