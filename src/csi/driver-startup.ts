import { statSync } from "node:fs";
import * as net from "node:net";
import { Code } from "@connectrpc/connect";
import type { Logger } from "../log/logger";
import { abortableSleep } from "../util/abortable-sleep";
import { Backoff, type BackoffPolicy } from "../util/backoff";
import { realClock } from "../util/clock";
import { errorMessage } from "../util/error-message";
import type { CsiClient, DriverCapabilities } from "./csi-client";
import { CsiCallError, DriverStartupError } from "./errors";

/** What the attacher learns from the driver before it starts working. */
export interface DriverInfo {
  readonly name: string;
  readonly capabilities: DriverCapabilities;
}

/**
 * Waiting for the CSI driver's socket and for Probe to say ready at start-up:
 * upstream retries every second, for ever.
 */
export const driverStartupRetry: BackoffPolicy = { initialMs: 1_000, factor: 1, maxMs: 1_000 };

export interface DriverStartupOptions {
  readonly client: CsiClient;
  readonly socketPath: string;
  readonly log: Logger;
  /** --timeout: deadline of each Probe. */
  readonly probeTimeoutMs: number;
  /** Deadline of the short identity calls (upstream's csiTimeout). Default 1 s. */
  readonly shortCallTimeoutMs?: number;
  /** Pauses between connection attempts and between probes. Default driverStartupRetry (every second, as upstream). */
  readonly retry?: BackoffPolicy;
  /**
   * Told the driver's name as soon as GetPluginInfo answers, before the
   * capability calls: the operation metrics label those with it, as
   * upstream's SetDriverName comes between the two. Default: nothing.
   */
  readonly onDriverName?: (name: string) => void;
  readonly signal: AbortSignal;
}

/** resolveDriverStartupOptions fills the defaults of every optional field. */
function resolveDriverStartupOptions(options: DriverStartupOptions): Required<DriverStartupOptions> {
  return { ...options, shortCallTimeoutMs: options.shortCallTimeoutMs ?? 1000, retry: options.retry ?? driverStartupRetry, onDriverName: options.onDriverName ?? (() => {}) };
}

/**
 * startDriver waits for the socket, probes until the driver is ready, then
 * asks its name and capabilities, in upstream's order. Probe failures other
 * than DeadlineExceeded, and any failure of the identity calls, are fatal:
 * a driver that answers wrongly at start will not answer rightly later.
 */
export async function startDriver(options: DriverStartupOptions): Promise<DriverInfo> {
  const { client, log, signal, shortCallTimeoutMs, retry, onDriverName } = resolveDriverStartupOptions(options);

  await waitForSocket(options.socketPath, new Backoff(retry), log, signal);
  const probes = new Backoff(retry);

  for (;;) {
    log.info("Probing CSI driver for readiness");
    try {
      if (await client.probe(options.probeTimeoutMs)) break;
      log.warn("CSI driver is not ready");
    } catch (e: unknown) {
      if (!(e instanceof CsiCallError) || e.code !== Code.DeadlineExceeded) {
        throw new DriverStartupError(`CSI driver probe failed: ${errorMessage(e)}`, { cause: e });
      }
      log.warn("CSI driver probe timed out");
    }
    await abortableSleep(probes.next(), signal);
  }

  let name: string;
  try {
    name = await client.driverName(shortCallTimeoutMs);
  } catch (e: unknown) {
    throw new DriverStartupError(`failed to get the CSI driver name: ${errorMessage(e)}`, { cause: e });
  }
  if (name === "") throw new DriverStartupError("the CSI driver returned an empty name from GetPluginInfo");
  log.info("CSI driver name", { driver: name });
  onDriverName(name);

  let capabilities: DriverCapabilities;
  try {
    capabilities = await client.capabilities(shortCallTimeoutMs);
  } catch (e: unknown) {
    throw new DriverStartupError(`failed to get the CSI driver's capabilities: ${errorMessage(e)}`, { cause: e });
  }
  return { name, capabilities };
}

/**
 * waitForSocket dials the socket until it accepts a connection: in a pod the
 * driver container may start after us, and upstream waits for it forever,
 * saying so every ten seconds.
 */
async function waitForSocket(path: string, backoff: Backoff, log: Logger, signal: AbortSignal): Promise<void> {
  let lastReport = 0;
  for (;;) {
    if (signal.aborted) throw new DriverStartupError("start-up aborted");
    const failure = await connectFailure(path);
    if (failure === undefined) return;
    const sinceReport = realClock.now() - lastReport;
    // A clock stepped back makes it due as well, rather than silent for the step's length.
    if (sinceReport >= 10_000 || sinceReport < 0) {
      // The reason tells a driver that has not started yet (no such file)
      // from a wrong --csi-address (a file that is not a socket).
      log.info("Still connecting", { address: `unix://${path}`, reason: failure });
      lastReport = realClock.now();
    }
    await abortableSleep(backoff.next(), signal);
  }
}

/** connectFailure dials the socket once: undefined when it connects, else why not. */
function connectFailure(path: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(path);
    socket.once("connect", () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once("error", (error: Error) => resolve(notASocket(path) ? `${path} exists but is not a socket` : error.message));
  });
}

function notASocket(path: string): boolean {
  try {
    return !statSync(path).isSocket();
  } catch (e: unknown) {
    // Gone, or unreadable: the connect error says which.
    void e;
    return false;
  }
}
