import { errorMessage } from "../../util/error-message";
import { TranslationError } from "./errors";

/**
 * GCE PD volume handles, as the PD CSI driver and csi-translation-lib spell
 * them: `projects/<project>/zones/<zone>/disks/<name>` or
 * `projects/<project>/regions/<region>/disks/<name>`. A PV carries no
 * project, so translation writes UNSPECIFIED and the reconciler repairs the
 * handle from the node ID (`projects/<project>/zones/<zone>/instances/<name>`)
 * before comparing it with what ListVolumes reports.
 */

/** The placeholder for a project or zone the PV does not say. */
export const unspecified = "UNSPECIFIED";

// Positions in a handle (and in a node ID) split at "/".
const projectIndex = 1;
const regionalityIndex = 2;
const locationIndex = 3;
const diskNameIndex = 5;
const minimumElements = 6;

export function zonalHandle(project: string, zone: string, diskName: string): string {
  return `projects/${project}/zones/${zone}/disks/${diskName}`;
}

export function regionalHandle(project: string, region: string, diskName: string): string {
  return `projects/${project}/regions/${region}/disks/${diskName}`;
}

/**
 * regionOfZones returns the one region all `zones` ({locale}-{region}-{zone},
 * e.g. us-central1-a) lie in, with csi-translation-lib's error wording.
 */
export function regionOfZones(zones: readonly string[]): string {
  if (zones.length < 1) throw new TranslationError("no zones specified");
  const regions = new Set<string>();
  for (const zone of zones) {
    const parts = zone.split("-");
    if (parts.length !== 3) throw new TranslationError(`zone in unexpected format, expected: {locale}-{region}-{zone}, got: ${zone}`);
    regions.add(`${parts[0]}-${parts[1]}`);
  }
  const [region] = regions;
  if (regions.size !== 1 || region === undefined) {
    throw new TranslationError(`multiple or no regions gotten from zones, got: ${goStringSet(regions)}`);
  }
  return region;
}

/**
 * repairGcePdVolumeHandle fills the UNSPECIFIED project (and zone or region)
 * of a translated handle from the node ID, as csi-translation-lib's
 * RepairVolumeHandle does: a handle whose project is known is returned
 * unchanged; a regional handle with no region takes the node's zone's region.
 */
export function repairGcePdVolumeHandle(volumeHandle: string, nodeId: string): string {
  const handle = volumeHandle.split("/");
  if (handle.length < minimumElements) {
    throw new TranslationError(`volume handle has wrong number of elements; got ${handle.length}, wanted ${minimumElements} or more`);
  }
  if (handle[projectIndex] !== unspecified) return volumeHandle;

  const node = nodeId.split("/");
  if (node.length < minimumElements) {
    throw new TranslationError(`node handle has wrong number of elements; got ${node.length}, wanted ${minimumElements} or more`);
  }
  const project = at(node, projectIndex);
  const nodeZone = at(node, locationIndex);
  const location = at(handle, locationIndex);
  const diskName = at(handle, diskNameIndex);
  const regionality = at(handle, regionalityIndex);
  switch (regionality) {
    case "zones":
      return zonalHandle(project, location === unspecified ? nodeZone : location, diskName);
    case "regions": {
      if (location !== unspecified) return regionalHandle(project, location, diskName);
      let region: string;
      try {
        region = regionOfZones([nodeZone]);
      } catch (e: unknown) {
        throw new TranslationError(`failed to get region from zone ${nodeZone}: ${errorMessage(e)}`, { cause: e });
      }
      return regionalHandle(project, region, diskName);
    }
    default:
      throw new TranslationError(`expected volume handle to have zones or regions regionality value, got: ${regionality}`);
  }
}

// Lengths are checked before every use; this only satisfies noUncheckedIndexedAccess.
function at(parts: readonly string[], index: number): string {
  return parts[index] ?? "";
}

// Go prints a sets.String with %v as its map: map[a:{} b:{}], keys sorted.
function goStringSet(values: ReadonlySet<string>): string {
  return `map[${[...values].sort().map((value) => `${value}:{}`).join(" ")}]`;
}
