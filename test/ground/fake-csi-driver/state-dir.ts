// A state directory that makes the fake driver behave like a real one across
// restarts: its volume table survives a crash (a real driver's backend does),
// and every finished call is appended to a journal that outlives each
// process, so a test that restarts the driver still sees the whole history.
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CallRecord } from "./control-protocol";
import type { VolumeTable } from "./volume-table";

/** JournalEntry is one finished call as the journal keeps it. */
export interface JournalEntry extends CallRecord {
  /** The driver process that answered it: seqs restart with each process. */
  readonly pid: number;
  /** Whether the normal behaviour ran (an OK call, or a failure scripted with `apply`). */
  readonly applied: boolean;
}

interface SavedVolume {
  readonly volumeId: string;
  readonly capacityBytes: string;
  readonly parameters: Record<string, string>;
  readonly nodeIds: readonly string[];
}

/** The journal's file name inside the state directory: one JSON entry a line. */
export const JOURNAL_FILE = "calls.jsonl";
const VOLUMES_FILE = "volumes.json";

/**
 * StateDir keeps the volume table and the call journal in a directory.
 * Writes are synchronous: a SIGKILL between a state change and its write
 * loses that change, as a crash of a real driver before it persisted
 * would, and the caller never got an answer for it.
 */
export class StateDir {
  constructor(readonly dir: string) {}

  /** load fills an empty table with the volumes saved by an earlier process, if any. */
  load(volumes: VolumeTable): void {
    const path = join(this.dir, VOLUMES_FILE);
    if (!existsSync(path)) return;
    const saved = JSON.parse(readFileSync(path, "utf8")) as SavedVolume[];
    for (const volume of saved) {
      volumes.create(volume.volumeId, BigInt(volume.capacityBytes), volume.parameters);
      for (const nodeId of volume.nodeIds) volumes.publish(volume.volumeId, nodeId);
    }
  }

  /** saveVolumes replaces the saved table atomically (write, then rename). */
  saveVolumes(volumes: VolumeTable): void {
    const saved: SavedVolume[] = volumes.page(0, 0).volumes.map((volume) => ({
      volumeId: volume.volumeId,
      capacityBytes: String(volume.capacityBytes),
      parameters: { ...volume.parameters },
      nodeIds: [...volume.nodeIds],
    }));
    const path = join(this.dir, VOLUMES_FILE);
    writeFileSync(`${path}.tmp`, JSON.stringify(saved));
    renameSync(`${path}.tmp`, path);
  }

  /** appendCall adds one finished call to the journal. */
  appendCall(entry: JournalEntry): void {
    appendFileSync(join(this.dir, JOURNAL_FILE), `${JSON.stringify(entry)}\n`);
  }
}

/** readJournal returns every call the driver's processes finished, in the order they finished. */
export function readJournal(dir: string): JournalEntry[] {
  const path = join(dir, JOURNAL_FILE);
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as JournalEntry];
      } catch (e: unknown) {
        // A SIGKILL can cut the last line short: that call never answered.
        if (e instanceof SyntaxError) return [];
        throw e;
      }
    });
}
