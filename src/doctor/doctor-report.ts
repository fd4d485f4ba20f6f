import { assessVolumeAttachment, type VolumeAttachmentHealth } from "./assess-volume-attachment";
import type { DoctorSnapshot } from "./cluster-snapshot";
import { factsOf } from "./volume-attachment-facts";

/** DoctorReport is what `csi-attacher doctor` prints, as a table or as JSON. */
export interface DoctorReport {
  readonly driver: {
    readonly name: string;
    /** True when the driver's published nodes were compared with each VA's status. */
    readonly checkedPublishedNodes: boolean;
  };
  readonly volumeAttachments: readonly VolumeAttachmentHealth[];
  /** How many rows are problems; the doctor exits non-zero when this is not 0. */
  readonly problems: number;
}

/** buildDoctorReport judges every VA of the snapshot at `nowMs`. */
export function buildDoctorReport(snapshot: DoctorSnapshot, options: { nowMs: number; stuckAfterMs: number }): DoctorReport {
  const context = { nowMs: options.nowMs, stuckAfterMs: options.stuckAfterMs, published: snapshot.published };
  const rows = snapshot.volumeAttachments.map((va) => assessVolumeAttachment(factsOf(va, snapshot.persistentVolumes, snapshot.csiNodes, snapshot.driverName), context));
  return {
    driver: { name: snapshot.driverName, checkedPublishedNodes: snapshot.published !== undefined },
    volumeAttachments: rows,
    problems: rows.filter((row) => row.problem).length,
  };
}
