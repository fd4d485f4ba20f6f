import { createClient, createContextValues, type Client, type ContextValues, type Transport } from "@connectrpc/connect";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Controller,
  ControllerPublishVolumeRequestSchema,
  ControllerServiceCapability_RPC_Type,
  ControllerUnpublishVolumeRequestSchema,
  Identity,
  PluginCapability_Service_Type,
  type ControllerPublishVolumeRequest,
  type ControllerUnpublishVolumeRequest,
} from "../../gen/csi/v1/csi_pb";
import { CsiCallError } from "./errors";
import { migratedVolumeKey } from "./operation-metrics-interceptor";

/** The driver capabilities that decide how the attacher behaves. */
export interface DriverCapabilities {
  readonly controllerService: boolean;
  readonly publishUnpublish: boolean;
  readonly publishReadonly: boolean;
  readonly singleNodeMultiWriter: boolean;
  readonly listVolumes: boolean;
  readonly listVolumesPublishedNodes: boolean;
}

export type PublishRequest = MessageInitShape<typeof ControllerPublishVolumeRequestSchema>;
export type UnpublishRequest = MessageInitShape<typeof ControllerUnpublishVolumeRequestSchema>;

/**
 * CsiClient makes the attacher's calls to the driver, each bounded by a
 * deadline, and turns every failure into a CsiCallError with the gRPC code.
 */
export class CsiClient {
  private readonly identity: Client<typeof Identity>;
  private readonly controller: Client<typeof Controller>;

  constructor(transport: Transport) {
    this.identity = createClient(Identity, transport);
    this.controller = createClient(Controller, transport);
  }

  /** probe answers whether the driver is ready; a missing `ready` means ready (CSI spec). */
  async probe(timeoutMs: number): Promise<boolean> {
    const response = await call(timeoutMs, (options) => this.identity.probe({}, options));
    return response.ready ?? true;
  }

  async driverName(timeoutMs: number): Promise<string> {
    const response = await call(timeoutMs, (options) => this.identity.getPluginInfo({}, options));
    return response.name;
  }

  async capabilities(timeoutMs: number): Promise<DriverCapabilities> {
    const plugin = await call(timeoutMs, (options) => this.identity.getPluginCapabilities({}, options));
    const controllerService = plugin.capabilities.some(
      (capability) =>
        capability.type.case === "service" && capability.type.value.type === PluginCapability_Service_Type.CONTROLLER_SERVICE,
    );
    const rpcs = new Set<ControllerServiceCapability_RPC_Type>();
    if (controllerService) {
      const controller = await call(timeoutMs, (options) => this.controller.controllerGetCapabilities({}, options));
      for (const capability of controller.capabilities) {
        if (capability.type.case === "rpc") rpcs.add(capability.type.value.type);
      }
    }
    const Type = ControllerServiceCapability_RPC_Type;
    return {
      controllerService,
      publishUnpublish: rpcs.has(Type.PUBLISH_UNPUBLISH_VOLUME),
      publishReadonly: rpcs.has(Type.PUBLISH_READONLY),
      singleNodeMultiWriter: rpcs.has(Type.SINGLE_NODE_MULTI_WRITER),
      listVolumes: rpcs.has(Type.LIST_VOLUMES),
      listVolumesPublishedNodes: rpcs.has(Type.LIST_VOLUMES_PUBLISHED_NODES),
    };
  }

  /** controllerPublish returns the driver's publish context. `volume.migrated` labels the call's metrics. */
  async controllerPublish(request: PublishRequest, timeoutMs: number, volume: VolumeOrigin = {}): Promise<Record<string, string>> {
    const message: ControllerPublishVolumeRequest = create(ControllerPublishVolumeRequestSchema, request);
    const contextValues = contextValuesFor(volume);
    const response = await call(timeoutMs, (options) => this.controller.controllerPublishVolume(message, { ...options, contextValues }));
    return response.publishContext;
  }

  /** controllerUnpublish detaches the volume; `volume.migrated` labels the call's metrics. */
  async controllerUnpublish(request: UnpublishRequest, timeoutMs: number, volume: VolumeOrigin = {}): Promise<void> {
    const message: ControllerUnpublishVolumeRequest = create(ControllerUnpublishVolumeRequestSchema, request);
    const contextValues = contextValuesFor(volume);
    await call(timeoutMs, (options) => this.controller.controllerUnpublishVolume(message, { ...options, contextValues }));
  }

  /**
   * forEachPublishedVolume pages through ListVolumes, `maxEntries` volumes
   * a page (0 = the driver's choice), and hands each volume's handle and
   * published node IDs to `onVolume` as its page arrives: a caller that
   * keeps only the volumes it cares about holds one page at a time, not the
   * driver's whole listing (100,000 volumes, or a backend shared with other
   * clusters). Each page has its own `timeoutMs`: a backend whose pages
   * together take longer than one --timeout (tens of thousands of volumes)
   * must still complete a pass, which upstream's single deadline for the
   * whole listing never lets it do. `signal` ends the listing early, on
   * shutdown. A volume listed twice is handed over twice, in listing order.
   */
  async forEachPublishedVolume(maxEntries: number, timeoutMs: number, onVolume: (volumeId: string, nodeIds: readonly string[]) => void, signal?: AbortSignal): Promise<void> {
    let startingToken = "";
    do {
      const response = await call(timeoutMs, (options) => this.controller.listVolumes({ maxEntries, startingToken }, { ...options, ...(signal ? { signal } : {}) }));
      for (const entry of response.entries) {
        if (entry.volume) onVolume(entry.volume.volumeId, entry.status?.publishedNodeIds ?? []);
      }
      // With a deadline per page, only this stops a driver that answers
      // every page with the token it was given from looping until shutdown.
      if (response.nextToken !== "" && response.nextToken === startingToken) throw new Error(`ListVolumes answered starting_token ${JSON.stringify(startingToken)} with the same next_token: the listing would never end`);
      startingToken = response.nextToken;
    } while (startingToken !== "");
  }

  /**
   * listVolumes maps every volume handle the driver lists to the node IDs
   * it is published to (see forEachPublishedVolume). A volume listed twice
   * keeps its last entry (upstream does the same).
   */
  async listVolumes(maxEntries: number, timeoutMs: number, signal?: AbortSignal): Promise<Map<string, readonly string[]>> {
    const published = new Map<string, readonly string[]>();
    await this.forEachPublishedVolume(maxEntries, timeoutMs, (volumeId, nodeIds) => published.set(volumeId, nodeIds), signal);
    return published;
  }
}

/** Where a published volume comes from, as the operation metrics label it. */
export interface VolumeOrigin {
  /** Translated from an in-tree PV by CSI migration (`migrated="true"`). Default false. */
  readonly migrated?: boolean;
}

function contextValuesFor(volume: VolumeOrigin): ContextValues {
  return createContextValues().set(migratedVolumeKey, volume.migrated ?? false);
}

async function call<R>(timeoutMs: number, invoke: (options: { timeoutMs: number }) => Promise<R>): Promise<R> {
  const started = performance.now();
  try {
    return await invoke({ timeoutMs });
  } catch (e: unknown) {
    throw CsiCallError.from(e, performance.now() - started >= timeoutMs);
  }
}
