/**
 * The two connections every attacher holds, opened the barest way Bun
 * offers, for the floor programs (bench/floor/*.ts), both on the
 * attacher's own HTTP/2 client (src/http2/): one over Bun's TLS socket to
 * kube-apiserver with a bearer token, ours' own ApiHttp2Connection, every
 * request and the watch a stream on it, as client-go does, and one to the
 * CSI driver's Unix socket carrying gRPC unary calls. Those cost
 * less than fetch's HTTP/1.1 and Bun's `node:http2` (issue 36, ninth and
 * tenth sessions): the floor takes every lever any Bun client could.
 * Nothing else is loaded: no kubeconfig library, no Connect, no validation.
 *
 * FLOOR_API_STACK in the environment (the bench's `--floor-api`) reaches
 * kube-apiserver another way: `fetch` (HTTP/1.1, a connection per request
 * in flight) or `http2` (`node:http2`, one TLS session).
 */
import type * as http2 from "node:http2";
import { UnixSocket } from "../../src/csi/unix-socket";
import { Http2ClientSession } from "../../src/http2/client-session";
import { ApiHttp2Connection } from "../../src/kube/api-http2-connection";
import { floorApiStackFromEnv, type FloorApiStack } from "./floor-api-stacks";

/** ApiTarget is what the floor reads from a kubeconfig: the test ground's form only (server, CA data, token). */
export interface ApiTarget {
  readonly server: string;
  readonly caPem: string;
  readonly token: string;
}

interface KubeconfigShape {
  clusters?: { cluster?: { server?: string; "certificate-authority-data"?: string } }[];
  users?: { user?: { token?: string } }[];
}

/** readApiTarget reads the first cluster and user of a kubeconfig. */
export async function readApiTarget(kubeconfigPath: string): Promise<ApiTarget> {
  const config = Bun.YAML.parse(await Bun.file(kubeconfigPath).text()) as KubeconfigShape;
  const cluster = config.clusters?.[0]?.cluster;
  const token = config.users?.[0]?.user?.token;
  if (cluster?.server === undefined || cluster["certificate-authority-data"] === undefined || token === undefined) {
    throw new Error(`${kubeconfigPath}: the floor needs a server, certificate-authority-data and a token`);
  }
  return { server: cluster.server, caPem: Buffer.from(cluster["certificate-authority-data"], "base64").toString("utf8"), token };
}

/** ApiRequest is one request to kube-apiserver; `long` marks a watch. */
interface ApiRequest {
  method?: string;
  contentType?: string;
  body?: string;
  long?: boolean;
}

/** apiFetch sends one request to kube-apiserver over the stack FLOOR_API_STACK names; a status >= 300 throws with the answer's text. */
export async function apiFetch(target: ApiTarget, path: string, init: ApiRequest = {}): Promise<Response> {
  const res = await apiRequestVia[floorApiStackFromEnv()](target, path, init);
  if (res.status >= 300) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${await res.text()}`);
  return res;
}

function fetchRequest(target: ApiTarget, path: string, init: ApiRequest): Promise<Response> {
  return fetch(`${target.server}${path}`, {
    method: init.method ?? "GET",
    headers: { Authorization: `Bearer ${target.token}`, Accept: "application/json", ...(init.contentType === undefined ? {} : { "Content-Type": init.contentType }) },
    ...(init.body === undefined ? {} : { body: init.body }),
    tls: { ca: target.caPem },
    // A watch may stay quiet for minutes: Bun would end it as idle.
    ...(init.long === true ? { timeout: false } : {}),
  });
}

/** The one HTTP/2 session to kube-apiserver, opened at the first request and again after it ends. */
let apiSession: http2.ClientHttp2Session | undefined;

/** node:http2 itself, loaded by the first request over it: the default stack (fetch) never pays for the module. */
let http2Module: typeof http2 | undefined;

async function apiSessionFor(target: ApiTarget): Promise<http2.ClientHttp2Session> {
  http2Module ??= await import("node:http2");
  if (apiSession === undefined || apiSession.closed || apiSession.destroyed) {
    const session = http2Module.connect(target.server, { ca: target.caPem });
    // A failed session fails its streams; the next request opens a new one.
    session.on("error", () => undefined);
    apiSession = session;
  }
  return apiSession;
}

/** http2Request sends one request as a stream of the shared session; a watch's body streams, any other answer is read whole first. */
async function http2Request(target: ApiTarget, path: string, init: ApiRequest): Promise<Response> {
  const stream = (await apiSessionFor(target)).request({
    ":method": init.method ?? "GET",
    ":path": path,
    authorization: `Bearer ${target.token}`,
    accept: "application/json",
    ...(init.contentType === undefined ? {} : { "content-type": init.contentType }),
  });
  stream.end(init.body);
  return new Promise((resolve, reject) => {
    stream.once("error", reject);
    stream.once("response", (headers) => {
      const status = Number(headers[":status"]);
      if (init.long === true) {
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            stream.on("data", (chunk: Buffer) => controller.enqueue(chunk));
            stream.on("end", () => controller.close());
            stream.on("error", (e: unknown) => controller.error(e));
          },
        });
        resolve(new Response(body, { status }));
        return;
      }
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => resolve(new Response(Buffer.concat(chunks), { status })));
    });
  });
}

/** The one connection to kube-apiserver on ours' own HTTP/2 client, made at the first request. */
let ownApi: ApiHttp2Connection | undefined;

/** ownHttp2Request sends one request the way ours does (ApiHttp2Connection); a watch's body streams as it arrives, any other answer is read whole first. */
async function ownHttp2Request(target: ApiTarget, path: string, init: ApiRequest): Promise<Response> {
  ownApi ??= new ApiHttp2Connection({ server: target.server, tls: { ca: target.caPem } });
  const headers: Record<string, string> = { authorization: `Bearer ${target.token}`, accept: "application/json" };
  if (init.contentType !== undefined) headers["content-type"] = init.contentType;
  const request = { method: init.method ?? "GET", path, headers, ...(init.body === undefined ? {} : { body: init.body }) };
  if (init.long !== true) {
    const answer = await ownApi.request(request);
    return new Response(answer.body, { status: answer.status });
  }
  const answer = await ownApi.stream(request);
  const body = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      const piece = await answer.next();
      if (piece === undefined) controller.close();
      else controller.enqueue(piece);
    },
  });
  return new Response(body, { status: answer.status });
}

/** How apiFetch sends a request on each stack. */
const apiRequestVia: Record<FloorApiStack, (target: ApiTarget, path: string, init: ApiRequest) => Promise<Response>> = {
  own: ownHttp2Request,
  fetch: fetchRequest,
  http2: http2Request,
};

/** connectDriver opens one HTTP/2 connection over the driver's socket, on the attacher's own Unix socket (UnixSocket: node:net costs more) and client session (the barest HTTP/2 this project has: node:http2 costs more), and resolves once it is connected. */
export function connectDriver(socketPath: string): Promise<Http2ClientSession> {
  return new Promise((resolve, reject) => {
    const socket = new UnixSocket(socketPath);
    const session = new Http2ClientSession(socket, { onGone: () => undefined });
    socket.on("connect", () => resolve(session));
    socket.on("error", reject);
  });
}

/** grpcUnary makes one gRPC unary call on `session`: a length-prefixed message out, one back; a non-zero grpc-status throws. */
export function grpcUnary(session: Http2ClientSession, path: string, message: Uint8Array): Promise<Uint8Array> {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  const fields: [string, string][] = [
    [":method", "POST"],
    [":scheme", "http"],
    [":authority", "localhost"],
    [":path", path],
    ["content-type", "application/grpc"],
    ["te", "trailers"],
  ];
  return new Promise((resolve, reject) => {
    session.request(fields, frame, (end) => {
      if (end.kind === "connection lost") {
        reject(new Error(`${path}: the connection to the driver was lost`));
        return;
      }
      // A trailers-only answer (an error) carries grpc-status in its headers.
      const status = end.trailers?.["grpc-status"] ?? end.headers?.["grpc-status"];
      if (status !== "0") {
        const detail = end.trailers?.["grpc-message"] ?? end.headers?.["grpc-message"] ?? "";
        reject(new Error(`${path}: grpc-status ${String(status ?? "missing")} ${decodeURIComponent(String(detail))}`));
        return;
      }
      const body = Buffer.concat(end.chunks);
      resolve(body.subarray(5, 5 + body.readUInt32BE(1)));
    });
  });
}

/** flagValue reads `--name=value` from argv (the form the bench passes). */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  const prefix = `--${name}=`;
  return argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}

/** exitOnSignals ends the program at SIGTERM/SIGINT (as PID 1, Bun ignores SIGTERM unless JS handles it). */
export function exitOnSignals(): void {
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => process.exit(0));
}
