import { startAttacher, type AttacherOptions, type AttacherProcess } from "../ground/attacher-process";
import type { AttacherEnd } from "./invariants";

/**
 * AttacherSupervisor keeps one compiled attacher running, as the kubelet
 * keeps a container: whenever it exits (killed by the suite, or exiting by
 * design after losing its driver) a new one starts. Each incarnation logs
 * to its own files (`attacher-<n>.stderr.log`).
 */
export class AttacherSupervisor {
  #current: AttacherProcess | undefined;
  #incarnation = 0;
  #stopping = false;
  #loop: Promise<void> | undefined;
  /** How each earlier incarnation ended, for the report. */
  readonly exits: string[] = [];
  /**
   * Which earlier incarnation ended when: a replica that died stopped
   * watching, and forgot what it alone had seen, so the judge needs to know
   * when.
   */
  readonly ends: AttacherEnd[] = [];

  /**
   * @param name  prefix of each incarnation's log files (`<name>-<n>`); default "attacher".
   * @param readyLine  what an incarnation logs once it is up: "Caches synced", or for a
   *   leader-election replica (which lists only once it leads) its first try for the Lease.
   * @param restartDelayMs  pause before a restart, as the kubelet's crash-loop back-off
   *   (10 s at first) makes; default 0.
   */
  constructor(
    private readonly options: Omit<AttacherOptions, "name">,
    readonly name = "attacher",
    private readonly readyLine: RegExp = /"Caches synced"/,
    private readonly restartDelayMs = 0,
  ) {}

  /** start runs the first attacher and resolves once it is up (its ready line). */
  async start(): Promise<void> {
    await this.#spawn();
    this.#loop = this.#supervise();
    await this.waitForNext(0);
  }

  /** current is the attacher running now. */
  get current(): AttacherProcess {
    if (this.#current === undefined) throw new Error("the supervisor has not started an attacher");
    return this.#current;
  }

  /** incarnations counts the attachers started so far. */
  get incarnations(): number {
    return this.#incarnation;
  }

  /** killHard ends the current attacher with SIGKILL (no drain, like a node losing power); the supervisor starts the next one. */
  async killHard(): Promise<void> {
    const victim = this.current;
    victim.process.killNow();
    await victim.process.exited;
  }

  /**
   * lastLeftByDriverLoss, asked once the driver died and before it comes
   * back, is the last incarnation that must be replaced: the running one if
   * it had reached that driver (logged its name), since it exits by design,
   * or the current one if none runs. One still starting (started just
   * before, e.g. back from losing its Lease, and not past the driver's
   * probe) reaches the next driver and has no reason to exit, so the
   * incarnation before it.
   */
  lastLeftByDriverLoss(): number {
    const { process } = this.current;
    const stillStarting = process.running && !/"CSI driver name"/.test(this.current.log());
    return stillStarting ? this.#incarnation - 1 : this.#incarnation;
  }

  /** waitForNext resolves once an attacher newer than `incarnation` is up (has logged its ready line). */
  async waitForNext(incarnation: number, timeoutMs = 120_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.#incarnation <= incarnation || !this.readyLine.test(this.current.log())) {
      if (performance.now() > deadline) throw new Error(`no attacher after incarnation ${incarnation} synced within ${timeoutMs} ms`);
      await Bun.sleep(50);
    }
  }

  /** stop ends the supervision and the attacher running now (SIGTERM, as a rollout would). */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#current?.[Symbol.asyncDispose]();
    await this.#loop;
  }

  /** The current incarnation's name: its log files' (`<name>-<n>.stderr.log`), and how the judge tells incarnations apart. */
  #incarnationName(): string {
    return `${this.name}-${this.#incarnation}`;
  }

  async #spawn(): Promise<void> {
    this.#incarnation += 1;
    this.#current = await startAttacher({ ...this.options, name: this.#incarnationName() }, false);
  }

  async #supervise(): Promise<void> {
    while (!this.#stopping) {
      const code = await this.current.process.exited;
      if (this.#stopping) return;
      const incarnation = this.#incarnationName();
      this.ends.push({ incarnation, atMs: Date.now() });
      this.exits.push(`${incarnation}: ${this.current.process.exitDescription ?? `exited ${code}`}`);
      if (this.restartDelayMs > 0) await Bun.sleep(this.restartDelayMs);
      if (this.#stopping) return;
      await this.#spawn();
    }
  }
}
