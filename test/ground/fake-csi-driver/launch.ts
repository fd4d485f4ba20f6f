// Starts the fake CSI driver as a child process for a test, and cleans up
// after it: `await using driver = await launchFakeCsiDriver({ config })`.
import type { Subprocess } from "bun";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DriverConfigPatch } from "./config";
import { FakeCsiDriverControl } from "./control-client";
import { removeStaleSocket } from "./unix-socket";

const MAIN = join(import.meta.dir, "main.ts");
/** Interval between /healthz polls while the driver starts. */
const HEALTH_POLL_MS = 20;
/** Keep this much of the driver's stderr for error messages. */
const STDERR_LIMIT = 64 * 1024;

/** LaunchOptions configure launchFakeCsiDriver. */
export interface LaunchOptions {
  /**
   * Directory for csi.sock and control.sock. Default: a new temporary
   * directory, removed on dispose. A given directory is kept; only the
   * sockets are removed. Unix socket paths are limited to ~100 bytes.
   */
  readonly directory?: string;
  /** Driver configuration; default: the defaults of config.ts. */
  readonly config?: DriverConfigPatch;
  /** How long to wait for the driver to answer /healthz; default 10000 ms. */
  readonly startTimeoutMs?: number;
  /** Bun executable that runs main.ts; default process.execPath (the Bun running the test). */
  readonly bunPath?: string;
  /** Pass the driver's stderr through to the test's; default false (kept for error messages). */
  readonly inheritStderr?: boolean;
}

/**
 * FakeCsiDriver is a running fake driver process. Disposing it kills the
 * process and removes its sockets (and its temporary directory).
 */
export interface FakeCsiDriver extends AsyncDisposable {
  /** Path of the CSI socket, for the attacher's --csi-address. */
  readonly csiSocket: string;
  /** The same socket as a gRPC target, "unix:///path". */
  readonly csiEndpoint: string;
  /** Path of the control socket. */
  readonly controlSocket: string;
  /** Directory holding both sockets. */
  readonly directory: string;
  /** Client for the control API. */
  readonly control: FakeCsiDriverControl;
  /** Process id of the current driver process. */
  readonly pid: number;
  /** kill ends the driver with SIGKILL (no clean-up, like a crash) and waits until it is gone. */
  kill(): Promise<void>;
  /**
   * restart starts a new driver process on the same sockets (killing the
   * current one first if it still runs), with the launch configuration or
   * `config`. Volumes, scripts and the log start empty, as after a crash.
   */
  restart(config?: DriverConfigPatch): Promise<void>;
  /** stderr returns what the driver wrote to stderr (the last 64 KiB), for diagnosing a failed test. */
  stderr(): string;
}

/**
 * launchFakeCsiDriver starts a fake CSI driver and resolves once its CSI
 * and control sockets serve; it rejects (with the driver's stderr) if the
 * process exits or does not become healthy in time.
 */
export async function launchFakeCsiDriver(options: LaunchOptions = {}): Promise<FakeCsiDriver> {
  const ownsDirectory = options.directory === undefined;
  const directory = options.directory ?? (await mkdtemp(join(tmpdir(), "fake-csi-")));
  const driver = new LaunchedDriver(directory, ownsDirectory, options);
  try {
    await driver.restart(options.config);
  } catch (e: unknown) {
    await driver[Symbol.asyncDispose]();
    throw e;
  }
  return driver;
}

/**
 * LaunchedDriver owns the driver's sockets and, across restarts, the
 * current driver process (at most one runs at a time).
 */
class LaunchedDriver implements FakeCsiDriver {
  readonly csiSocket: string;
  readonly csiEndpoint: string;
  readonly controlSocket: string;
  readonly control: FakeCsiDriverControl;
  /** The current process; undefined only before the first start. */
  #process: Subprocess<"pipe", "ignore", "pipe" | "inherit"> | undefined;
  #stderr = "";

  constructor(
    readonly directory: string,
    private readonly ownsDirectory: boolean,
    private readonly options: LaunchOptions,
  ) {
    this.csiSocket = join(directory, "csi.sock");
    this.csiEndpoint = `unix://${this.csiSocket}`;
    this.controlSocket = join(directory, "control.sock");
    this.control = new FakeCsiDriverControl(this.controlSocket);
  }

  get pid(): number {
    return this.#process?.pid ?? -1;
  }

  stderr(): string {
    return this.#stderr;
  }

  async kill(): Promise<void> {
    const child = this.#process;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
    }
    await child?.exited;
  }

  async restart(config: DriverConfigPatch | undefined = this.options.config): Promise<void> {
    await this.kill();
    this.#stderr = "";
    const inherit = this.options.inheritStderr === true;
    const child = Bun.spawn(
      [
        this.options.bunPath ?? process.execPath,
        "run",
        MAIN,
        "--socket",
        this.csiSocket,
        "--control",
        this.controlSocket,
        "--config",
        JSON.stringify(config ?? {}),
        "--exit-with-stdin",
      ],
      // stdin stays an open pipe that is never written: it closes when this
      // process dies, which tells the driver to exit too.
      { stdin: "pipe", stdout: "ignore", stderr: inherit ? "inherit" : "pipe" },
    );
    this.#process = child;
    const stderrRead = child.stderr instanceof ReadableStream ? this.#collectStderr(child.stderr) : Promise.resolve();
    await this.#waitHealthy(child, stderrRead);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill();
    // SIGKILL leaves the socket files behind; remove them so the directory
    // (which may be the caller's) is as it was.
    await removeStaleSocket(this.csiSocket);
    await removeStaleSocket(this.controlSocket);
    if (this.ownsDirectory) {
      await rm(this.directory, { recursive: true, force: true });
    }
  }

  /**
   * waitHealthy polls /healthz until this very process answers (checking
   * the pid makes that an invariant rather than luck after a restart), and
   * fails fast if the process exits first, e.g. on a bad --config.
   */
  async #waitHealthy(child: Subprocess, stderrRead: Promise<void>): Promise<void> {
    const timeoutMs = this.options.startTimeoutMs ?? 10_000;
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        // The driver's last words explain the exit; wait until they are read.
        await stderrRead;
        throw new Error(
          `fake CSI driver exited (${child.exitCode ?? child.signalCode}) before serving; stderr:\n${this.#stderr}`,
        );
      }
      try {
        if ((await this.control.healthz()).pid === child.pid) {
          return;
        }
      } catch (e: unknown) {
        // Not listening yet (the socket is missing or refuses): poll again.
        lastError = e;
      }
      if (Date.now() >= deadline) {
        throw new Error(
          `fake CSI driver did not answer /healthz within ${timeoutMs} ms (last error: ${String(lastError)}); stderr:\n${this.#stderr}`,
        );
      }
      await Bun.sleep(HEALTH_POLL_MS);
    }
  }

  /** collectStderr keeps the tail of the driver's stderr; it never rejects. */
  async #collectStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of stream) {
        this.#stderr = (this.#stderr + decoder.decode(chunk, { stream: true })).slice(-STDERR_LIMIT);
      }
    } catch (e: unknown) {
      this.#stderr += `\n[reading the driver's stderr failed: ${String(e)}]`;
    }
  }
}
