import type { DriverCapabilities } from "../csi/csi-client";
import { csiNodesPath, parseCsiNode, type CsiNode } from "../kube/objects/csi-node";
import { parsePersistentVolume, persistentVolumesPath, type PersistentVolume } from "../kube/objects/persistent-volume";
import { volumeAttachmentsPath } from "../kube/objects/volume-attachment";
import { listInPages, type PageReader } from "../kube/paged-list";
import { parseTimestampedVolumeAttachment, type TimestampedVolumeAttachment } from "./timestamped-volume-attachment";

/**
 * ApiReader is the part of the API client the doctor may use: GET only, so
 * that it cannot write to the API even by mistake.
 */
export type ApiReader = PageReader;

/**
 * DriverReader is the part of the CSI client the doctor may use: identity,
 * capabilities and ListVolumes, never ControllerPublish or Unpublish.
 */
export interface DriverReader {
  driverName(timeoutMs: number): Promise<string>;
  capabilities(timeoutMs: number): Promise<DriverCapabilities>;
  listVolumes(maxEntries: number, timeoutMs: number, signal?: AbortSignal): Promise<Map<string, readonly string[]>>;
}

/** DoctorSnapshot is everything the doctor read, at about one moment. */
export interface DoctorSnapshot {
  readonly driverName: string;
  /** The VAs whose spec.attacher is the driver, by name. */
  readonly volumeAttachments: readonly TimestampedVolumeAttachment[];
  readonly persistentVolumes: ReadonlyMap<string, PersistentVolume>;
  /** Every CSINode, by node name: the node IDs the drivers registered. */
  readonly csiNodes: ReadonlyMap<string, CsiNode>;
  /** Volume ID to published node IDs; undefined when the driver lacks LIST_VOLUMES_PUBLISHED_NODES. */
  readonly published: ReadonlyMap<string, readonly string[]> | undefined;
}

/** How many objects one page of a list asks for. */
const pageSize = 500;

/**
 * takeSnapshot asks the driver who it is and what it can do, lists VAs, PVs
 * and CSINodes, and, when the driver can say, which nodes each volume is
 * published to. The driver's view is read last, so that a publish which
 * finished while the API was being listed is seen as published.
 */
export async function takeSnapshot(api: ApiReader, driver: DriverReader, timeoutMs: number): Promise<DoctorSnapshot> {
  const driverName = await driver.driverName(timeoutMs);
  const capabilities = await driver.capabilities(timeoutMs);
  const volumeAttachments = (await listAll(api, volumeAttachmentsPath, parseTimestampedVolumeAttachment))
    .filter((va) => va.spec.attacher === driverName)
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const persistentVolumes = new Map((await listAll(api, persistentVolumesPath, parsePersistentVolume)).map((pv) => [pv.metadata.name, pv]));
  const csiNodes = new Map((await listAll(api, csiNodesPath, parseCsiNode)).map((csiNode) => [csiNode.metadata.name, csiNode]));
  // LIST_VOLUMES_PUBLISHED_NODES without LIST_VOLUMES is no promise to answer ListVolumes.
  const canList = capabilities.listVolumes && capabilities.listVolumesPublishedNodes;
  const published = canList ? await driver.listVolumes(0, timeoutMs) : undefined;
  return { driverName, volumeAttachments, persistentVolumes, csiNodes, published };
}

/** listAll reads every page of a list and parses each item. */
async function listAll<T>(api: ApiReader, path: string, parse: (raw: unknown) => T): Promise<T[]> {
  const items: T[] = [];
  await listInPages(api, path, pageSize, (raw) => items.push(parse(raw)));
  return items;
}
