import * as net from "node:net";
import { Code } from "@connectrpc/connect";
import type { Logger } from "../log/logger";
import type { CsiClient, DriverCapabilities } from "./csi-client";
import { CsiCallError } from "./errors";

/** What the attacher learns from the driver before it starts working. */
export interface DriverInfo {
  readonly name: string;
  readonly capabilities: DriverCapabilities;
}

export interface DriverStartupOptions {
  readonly client: CsiClient;
  readonly socketPath: string;
  readonly log: Logger;
  /** --timeout: deadline of each Probe. */
  readonly probeTimeoutMs: number;
  /** Deadline of the short identity calls (upstream's csiTimeout). Default 1 s. */
  readonly shortCallTimeoutMs?: number;
  /** Pause between connection attempts and probes. Default 1 s. */
  readonly retryIntervalMs?: number;
  readonly signal: AbortSignal;
}

/** DriverStartupError stops start-up: upstream exits non-zero on each of these. */
export class DriverStartupError extends Error {
  override name = "DriverStartupError";
}

/**
 * startDriver waits for the socket, probes until the driver is ready, then
 * asks its name and capabilities, in upstream's order. Probe failures other
 * than DeadlineExceeded, and any failure of the identity calls, are fatal:
 * a driver that answers wrongly at start will not answer rightly later.
 */
export async function startDriver(options: DriverStartupOptions): Promise<DriverInfo> {
  const { client, log, signal } = options;
  const shortCallTimeoutMs = options.shortCallTimeoutMs ?? 1000;
  const retryIntervalMs = options.retryIntervalMs ?? 1000;

  await waitForSocket(options.socketPath, retryIntervalMs, log, signal);

  for (;;) {
    log.info("Probing CSI driver for readiness");
    try {
      if (await client.probe(options.probeTimeoutMs)) break;
      log.warn("CSI driver is not ready");
    } catch (e: unknown) {
      if (!(e instanceof CsiCallError) || e.code !== Code.DeadlineExceeded) {
        throw new DriverStartupError(`CSI driver probe failed: ${messageOf(e)}`, { cause: e });
      }
      log.warn("CSI driver probe timed out");
    }
    await sleep(retryIntervalMs, signal);
  }

  let name: string;
  try {
    name = await client.driverName(shortCallTimeoutMs);
  } catch (e: unknown) {
    throw new DriverStartupError(`failed to get the CSI driver name: ${messageOf(e)}`, { cause: e });
  }
  if (name === "") throw new DriverStartupError("the CSI driver returned an empty name from GetPluginInfo");
  log.info("CSI driver name", { driver: name });

  let capabilities: DriverCapabilities;
  try {
    capabilities = await client.capabilities(shortCallTimeoutMs);
  } catch (e: unknown) {
    throw new DriverStartupError(`failed to get the CSI driver's capabilities: ${messageOf(e)}`, { cause: e });
  }
  return { name, capabilities };
}

/**
 * waitForSocket dials the socket until it accepts a connection: in a pod the
 * driver container may start after us, and upstream waits for it forever,
 * saying so every ten seconds.
 */
async function waitForSocket(path: string, retryIntervalMs: number, log: Logger, signal: AbortSignal): Promise<void> {
  let lastReport = 0;
  for (;;) {
    if (signal.aborted) throw new DriverStartupError("start-up aborted");
    if (await canConnect(path)) return;
    if (Date.now() - lastReport >= 10_000) {
      log.info("Still connecting", { address: `unix://${path}` });
      lastReport = Date.now();
    }
    await sleep(retryIntervalMs, signal);
  }
}

function canConnect(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(path);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
