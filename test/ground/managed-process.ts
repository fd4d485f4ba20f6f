/**
 * Child processes of the test ground (etcd, kube-apiserver, CSI drivers):
 * spawned with their output in log files, waited on by condition, stopped by
 * pid with a grace period, and never outliving the test process.
 *
 * A test that throws, times out or is interrupted must not leave an apiserver
 * holding a port and an etcd holding its data dir. Two safety nets:
 * - every live child sits in one registry, stopped gracefully on
 *   SIGHUP/SIGINT/SIGTERM and killed on process 'exit';
 * - every child has a watchdog, a tiny `sh` blocked reading a pipe only this
 *   process writes to. However this process ends (SIGKILL, a crash, or
 *   `bun test`, which skips 'exit' listeners, oven-sh/bun#38442), the kernel
 *   closes the pipe and the watchdog kills the child's process group.
 */
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Options of {@link spawnManaged}. */
export interface SpawnManagedOptions {
  /** Short name used in log file names and error messages, e.g. "etcd". */
  readonly name: string;
  /** Executable and arguments. */
  readonly command: readonly string[];
  /** Directory for `<name>.stdout.log` and `<name>.stderr.log`. */
  readonly logDir: string;
  /** Environment; default the test process's own. */
  readonly env?: Record<string, string | undefined>;
  /** Working directory; default `logDir`. */
  readonly cwd?: string;
}

/**
 * CommandWrapper is a command line put before a program's own, which then
 * runs that program: a shell that joins a memory cgroup and execs it (the pid
 * stays the program's), or QEMU's user-mode emulator for another CPU's
 * binary. An empty one runs the program as it is.
 */
export type CommandWrapper = readonly string[];

/** Default time between SIGTERM and SIGKILL in {@link ManagedProcess.stop}. */
export const DEFAULT_GRACE_MS = 5_000;

/** The signals that end a process running the ground. */
export type StopSignal = "SIGHUP" | "SIGINT" | "SIGTERM";

const live = new Set<ManagedProcess>();
const exitHooks = new Set<() => void>();
let handlersInstalled = false;
/** Set by {@link handOverSignals}: who decides what a stop signal does instead of the default. */
let signalOwner: ((signal: StopSignal) => void) | undefined;

/**
 * ManagedProcess is one child started by {@link spawnManaged}. Its output
 * goes to append-mode log files, so a restart in the same directory keeps the
 * earlier run's log above the new one.
 */
export class ManagedProcess implements AsyncDisposable {
  readonly name: string;
  readonly pid: number;
  readonly stdoutPath: string;
  readonly stderrPath: string;
  /** Resolves with the exit code once the process has been reaped. */
  readonly exited: Promise<number>;
  readonly #subprocess: Bun.Subprocess;
  #stopRequested = false;

  constructor(name: string, subprocess: Bun.Subprocess, stdoutPath: string, stderrPath: string) {
    this.name = name;
    this.pid = subprocess.pid;
    this.stdoutPath = stdoutPath;
    this.stderrPath = stderrPath;
    this.#subprocess = subprocess;
    const watchdog = spawnWatchdog(subprocess.pid);
    this.exited = subprocess.exited.finally(() => {
      live.delete(this);
      // Its job is done; left alone it would outlive us by design.
      watchdog.kill("SIGKILL");
    });
  }

  /** True until the process has exited and been reaped. */
  get running(): boolean {
    return this.#subprocess.exitCode === null && this.#subprocess.signalCode === null;
  }

  /** True once stop() was called: an exit after that is not a crash. */
  get stopRequested(): boolean {
    return this.#stopRequested;
  }

  /** How the process ended, for error messages; undefined while running. */
  get exitDescription(): string | undefined {
    if (this.#subprocess.signalCode !== null) return `killed by ${this.#subprocess.signalCode}`;
    if (this.#subprocess.exitCode !== null) return `exited with code ${this.#subprocess.exitCode}`;
    return undefined;
  }

  /** The last `lines` lines of the process's stderr log. */
  stderrTail(lines = 20): string {
    return tailOfFile(this.stderrPath, lines);
  }

  /**
   * Stops the process: SIGTERM, then SIGKILL if it has not exited after
   * `graceMs`. Resolves once it has been reaped, so its pid is gone.
   */
  async stop(graceMs = DEFAULT_GRACE_MS): Promise<void> {
    this.#stopRequested = true;
    if (!this.running) {
      await this.exited;
      return;
    }
    this.#subprocess.kill("SIGTERM");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), graceMs);
    });
    const outcome = await Promise.race([this.exited, graceOver]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      this.#subprocess.kill("SIGKILL");
    }
    await this.exited;
  }

  /** Kills at once without waiting; for the synchronous process 'exit' hook. */
  killNow(): void {
    this.#stopRequested = true;
    if (this.running) this.#subprocess.kill("SIGKILL");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/**
 * Starts a child process with stdin closed and stdout/stderr appended to log
 * files in `logDir`, and registers it so it is killed if the test process
 * ends first.
 */
export function spawnManaged(options: SpawnManagedOptions): ManagedProcess {
  installHandlers();
  const stdoutPath = join(options.logDir, `${options.name}.stdout.log`);
  const stderrPath = join(options.logDir, `${options.name}.stderr.log`);
  const stdoutFd = openSync(stdoutPath, "a");
  const stderrFd = openSync(stderrPath, "a");
  try {
    const subprocess = Bun.spawn({
      cmd: [...options.command],
      cwd: options.cwd ?? options.logDir,
      // A session of its own keeps the terminal's Ctrl-C away from the child,
      // so the parent's handler stops children in order (apiserver before
      // etcd) instead of all of them dying at once.
      detached: true,
      env: options.env ?? process.env,
      stdin: "ignore",
      stdout: stdoutFd,
      stderr: stderrFd,
    });
    const child = new ManagedProcess(options.name, subprocess, stdoutPath, stderrPath);
    live.add(child);
    return child;
  } finally {
    // The child has its own copies of the descriptors.
    closeSync(stdoutFd);
    closeSync(stderrFd);
  }
}

/** Options of {@link waitForCondition}. */
export interface WaitOptions {
  /** What is awaited, for the timeout message, e.g. "etcd /health". */
  readonly description: string;
  /** Overall deadline in ms. */
  readonly timeoutMs: number;
  /** Time between checks in ms; default 50. */
  readonly intervalMs?: number;
  /** How far the wait has got, e.g. "40/100 attached", for the timeout message. Default: nothing. */
  readonly status?: () => string;
  /**
   * Processes the condition depends on: if one exits, waiting stops at once
   * with its stderr tail instead of running into the deadline.
   */
  readonly watch?: readonly ManagedProcess[];
}

/**
 * Polls `check` until it returns true. A check that throws counts as "not
 * yet" (connection refused while a server starts is the normal case); the
 * last such error is reported if the deadline passes.
 */
export async function waitForCondition(check: () => boolean | Promise<boolean>, options: WaitOptions): Promise<void> {
  const deadline = performance.now() + options.timeoutMs;
  const intervalMs = options.intervalMs ?? 50;
  let lastError: unknown;
  for (;;) {
    for (const child of options.watch ?? []) {
      if (!child.running) {
        throw new Error(
          `${child.name} ${child.exitDescription ?? "exited"} while waiting for ${options.description}; ` +
            `last lines of ${child.stderrPath}:\n${child.stderrTail()}`,
        );
      }
    }
    try {
      if (await check()) return;
      lastError = undefined;
    } catch (e: unknown) {
      lastError = e;
    }
    if (performance.now() >= deadline) {
      const status = options.status === undefined ? "" : ` (${options.status()})`;
      const reason = lastError === undefined ? "" : ` (last error: ${errorMessage(lastError)})`;
      const logs = (options.watch ?? []).map((child) => `\nlast lines of ${child.stderrPath}:\n${child.stderrTail()}`);
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.description}${status}${reason}${logs.join("")}`);
    }
    await Bun.sleep(intervalMs);
  }
}

/** Stops every live managed process, in parallel, each with its grace period. */
export async function stopAllManaged(graceMs = DEFAULT_GRACE_MS): Promise<void> {
  await Promise.all([...live].map((child) => child.stop(graceMs)));
}

/**
 * Registers a synchronous hook run when the test process exits, after the
 * remaining children have been killed (e.g. removing a temp dir). Returns a
 * function that unregisters it.
 */
export function onProcessExit(hook: () => void): () => void {
  installHandlers();
  exitHooks.add(hook);
  return () => exitHooks.delete(hook);
}

/**
 * handOverSignals gives SIGHUP, SIGINT and SIGTERM to `onSignal` instead of
 * the default, which stops every child and exits with 128 plus the signal's
 * number, as an interrupted test run should. A program for which Ctrl-C is
 * the normal way to end (`bun run start`) takes its ground down in its own
 * order and chooses its own exit code. The 'exit' hook and the watchdogs
 * stay, so no child outlives the process either way.
 */
export function handOverSignals(onSignal: (signal: StopSignal) => void): void {
  installHandlers();
  signalOwner = onSignal;
}

/** The message of an unknown thrown value. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Starts the watchdog of the child `pid`, which leads its own process group
 * (spawned detached), so `kill -9 -pid` also takes any grandchildren.
 */
function spawnWatchdog(pid: number): Bun.Subprocess {
  const watchdog = Bun.spawn({
    // dash's kill takes neither `--` nor `-s KILL` before a negative pid.
    cmd: ["/bin/sh", "-c", 'read -r line; kill -9 "-$0"', String(pid)],
    // Nothing is ever written: the pipe exists only to reach EOF when we die.
    stdin: "pipe",
    stdout: "ignore",
    stderr: "ignore",
    // Out of the terminal's process group, so Ctrl-C cannot fire it early.
    detached: true,
  });
  // The watchdog must not keep the test process alive.
  watchdog.unref();
  return watchdog;
}

function tailOfFile(path: string, lines: number): string {
  try {
    const text = readFileSync(path, "utf8").trimEnd();
    return text.split("\n").slice(-lines).join("\n");
  } catch (e: unknown) {
    return `(cannot read ${path}: ${errorMessage(e)})`;
  }
}

function runExitHooks(): void {
  // 'exit' listeners cannot await, so SIGKILL is the only sure stop here.
  for (const child of live) child.killNow();
  for (const hook of exitHooks) {
    try {
      hook();
    } catch (e: unknown) {
      console.error(`test ground exit hook failed: ${errorMessage(e)}`);
    }
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("exit", runExitHooks);
  for (const [signal, code] of [
    ["SIGHUP", 129],
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    // Installing a listener replaces the default "die at once", so the
    // children get their SIGTERM and grace period before we exit.
    process.on(signal, () => {
      if (signalOwner !== undefined) {
        signalOwner(signal);
        return;
      }
      stopAllManaged().then(
        () => process.exit(code),
        (e: unknown) => {
          console.error(`stopping test ground processes failed: ${errorMessage(e)}`);
          process.exit(code);
        },
      );
    });
  }
}
