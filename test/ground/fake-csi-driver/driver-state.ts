// Everything the fake driver knows, in one object shared by the CSI
// services (which act on it) and the control server (which shows and
// changes it). Both run on the one event loop, so no locking is needed.
import { CallLog, type OpenCall } from "./call-log";
import type { StatusCodeName } from "./status-codes";
import { resolveDriverConfig, type DriverConfig } from "./config";
import { Code, CsiStatusError } from "./errors";
import { HangGate } from "./hang-gate";
import { Script } from "./script";
import { StateDir } from "./state-dir";
import { VolumeTable } from "./volume-table";

/**
 * DriverState is the fake driver's state: its configuration, volume table,
 * scripted answers, held calls and call log.
 */
export class DriverState {
  /** The configuration given at launch, which POST /reset returns to. */
  readonly #launchConfig: DriverConfig;
  #config: DriverConfig;
  readonly volumes = new VolumeTable();
  readonly script = new Script();
  readonly gate = new HangGate();
  readonly calls = new CallLog();

  /** Closes every client connection of the CSI server; set by the server once it listens. */
  #disconnectClients: () => void = () => {};

  /** Where volumes and the call journal outlive the process; undefined without `stateDir`. */
  readonly #stateDir: StateDir | undefined;

  constructor(config: DriverConfig) {
    this.#launchConfig = config;
    this.#config = config;
    this.#stateDir = config.stateDir === null ? undefined : new StateDir(config.stateDir);
    this.#stateDir?.load(this.volumes);
  }

  /**
   * finishCall records how a call ended in the call log and, with a state
   * directory, in the journal, saving the volume table when the call
   * changed it (`applied`).
   */
  finishCall(call: OpenCall, code: StatusCodeName, message: string | null, applied: boolean): void {
    const record = this.calls.finish(call, code, message);
    if (this.#stateDir === undefined) return;
    if (applied) this.#stateDir.saveVolumes(this.volumes);
    if (record !== undefined) this.#stateDir.appendCall({ ...record, pid: process.pid, applied });
  }

  /** config is the configuration in force; handlers read it per call so changes apply at once. */
  get config(): DriverConfig {
    return this.#config;
  }

  /** onDisconnect installs how the CSI server drops its client connections. */
  onDisconnect(disconnect: () => void): void {
    this.#disconnectClients = disconnect;
  }

  /** disconnectClients closes every client connection of the CSI server (a `disconnect` answer). */
  disconnectClients(): void {
    this.#disconnectClients();
  }

  /** configure lays a patch over the current configuration; throws InvalidConfigError. */
  configure(patch: unknown): DriverConfig {
    this.#config = resolveDriverConfig(patch, this.#config);
    return this.#config;
  }

  /**
   * reset returns to the state right after launch: launch configuration, no
   * volumes, scripts or log. Held calls fail with Unavailable rather than
   * go on, because going on would write into the fresh volume table.
   */
  reset(): void {
    this.script.clear();
    this.gate.release(undefined, new CsiStatusError(Code.Unavailable, "fake driver was reset while the call was held"));
    this.volumes.clear();
    this.calls.clear();
    this.#config = this.#launchConfig;
  }
}
