/**
 * Kubernetes' own mock CSI driver (the one its storage e2e tests use), served
 * on a Unix socket by test/ground/mock-csi-driver/main.go.
 */
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join, resolve } from "node:path";
import { spawnManaged, waitForCondition, type ManagedProcess } from "./managed-process";

/** Options of {@link startMockCsiDriver}. */
export interface MockCsiDriverOptions {
  /** Path of the built driver, e.g. `ComponentPaths.mockCsiDriver`. */
  readonly binary: string;
  /** Directory for the socket and the driver's logs. */
  readonly dir: string;
  /** Driver name; also its only node ID. Default "mock.csi.test". */
  readonly name?: string;
  /** Report no PUBLISH_UNPUBLISH_VOLUME capability; default false. */
  readonly disableAttach?: boolean;
  /** Deadline in ms for the socket to accept connections; default 30000. */
  readonly startTimeoutMs?: number;
}

/**
 * MockCsiDriver is a running mock driver. ControllerPublish succeeds only
 * for node ID {@link MockCsiDriver.nodeId} (NotFound for any other), so a
 * test CSINode must carry that ID. It starts with three volumes; CreateVolume
 * makes more.
 */
export interface MockCsiDriver extends AsyncDisposable {
  /** Absolute path of the Unix socket, for the attacher's --csi-address. */
  readonly socket: string;
  readonly name: string;
  /** The only node ID the driver accepts; equals {@link name}. */
  readonly nodeId: string;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

/** Linux sun_path holds 108 bytes including the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * startMockCsiDriver starts the driver and resolves once its socket exists
 * and accepts a connection, so a gRPC client can call it at once.
 */
export async function startMockCsiDriver(options: MockCsiDriverOptions): Promise<MockCsiDriver> {
  const name = options.name ?? "mock.csi.test";
  const socket = join(resolve(options.dir), `${name}.sock`);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH_BYTES) {
    // bind() would fail with a bare EINVAL inside the driver; say why here.
    throw new Error(`socket path ${socket} is longer than ${MAX_SOCKET_PATH_BYTES} bytes; use a shorter dir`);
  }
  const child = spawnManaged({
    name: `csi-driver-${name}`,
    logDir: resolve(options.dir),
    command: [options.binary, `--endpoint=${socket}`, `--name=${name}`, ...(options.disableAttach === true ? ["--disable-attach"] : [])],
  });
  try {
    const ready = async (): Promise<boolean> => {
      // The driver removes a stale socket before listening, so a file alone proves nothing.
      if (!existsSync(socket)) return false;
      await probeSocket(socket);
      return true;
    };
    await waitForCondition(ready, {
      description: `mock CSI driver socket ${socket}`,
      timeoutMs: options.startTimeoutMs ?? 30_000,
      watch: [child],
    });
  } catch (e: unknown) {
    await child.stop();
    throw e;
  }
  const stop = (): Promise<void> => child.stop();
  return { socket, name, nodeId: name, process: child, stop, [Symbol.asyncDispose]: stop };
}

/** acceptsConnection connects to a Unix socket and closes again; true if the connect succeeded. */
export function acceptsConnection(socket: string): Promise<boolean> {
  // Any connect error (ENOENT, ECONNREFUSED) is the answer "no".
  return probeSocket(socket).then(
    () => true,
    () => false,
  );
}

/** Connects and closes; rejects with the connect error, so a timeout can report it. */
function probeSocket(socket: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const conn = connect(socket);
    conn.once("connect", () => {
      conn.destroy();
      resolvePromise();
    });
    conn.once("error", (e: Error) => {
      conn.destroy();
      reject(e);
    });
  });
}
