/**
 * Volumes of Kubernetes' mock CSI driver that every one of its processes
 * knows. The mock keeps its volumes in the memory of each process: it
 * starts with three ("1" to "3"), and every call on a volume
 * (ControllerPublish in the controller pod, NodeStage and NodePublish in
 * the node plugin) fails with NotFound for an ID that process never made.
 * A real driver's controller and node side share a storage backend; to
 * stand for it, the same volumes are made by CreateVolume, as a
 * provisioner makes them, in every process, in the same order, so that each
 * gives them the same IDs (it numbers them in creation order).
 */
import { csiTestClient } from "../../ground/csi-test-client";

/** A mount volume's capability, single-node writer: what the PVs of the tests ask for. */
const mountWriter = { accessType: { case: "mount" as const, value: {} }, accessMode: { mode: 1 } };

/**
 * createSharedVolumes calls CreateVolume for each of `names` on each socket
 * and returns the volume IDs, in the order of `names`. Throws when two
 * processes gave one name different IDs (one of them made volumes before),
 * since a PV would then name a different volume in each.
 */
export async function createSharedVolumes(sockets: readonly string[], names: readonly string[]): Promise<string[]> {
  const idsBySocket = await Promise.all(
    sockets.map(async (socket) => {
      const client = csiTestClient(socket);
      const ids: string[] = [];
      // One after another: the mock numbers volumes in the order it makes them.
      for (const name of names) ids.push((await client.createVolume({ name, volumeCapabilities: [mountWriter] })).volume?.volumeId ?? "");
      return { socket, ids };
    }),
  );
  const [first, ...others] = idsBySocket;
  if (first === undefined) throw new Error("createSharedVolumes needs at least one driver socket");
  for (const other of others) {
    if (other.ids.join(",") !== first.ids.join(",")) {
      throw new Error(`the mock driver on ${other.socket} gave the volumes ${names.join(",")} the IDs ${other.ids.join(",")}, the one on ${first.socket} ${first.ids.join(",")}`);
    }
  }
  return first.ids;
}
