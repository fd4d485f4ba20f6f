// The control API: HTTP/JSON on a Unix socket, through which a test (or a
// person with `curl --unix-socket`) scripts the fake driver and reads what
// happened to it. Bodies and answers are JSON; errors answer 4xx/5xx with
// { "error": "..." }.
//
//   GET  /healthz         -> { ok: true, pid, name }  (ready: the CSI socket is serving)
//   GET  /calls[?method=] -> CallRecord[]              call log, oldest first
//   POST /calls/clear     -> {}                        forget the log (seqs keep counting)
//   GET  /script          -> { [method]: PendingAnswer[] }  answers not used up yet
//   POST /script          { method, answers }  -> {}   replace one method's answers
//   POST /script/clear    -> {}                        drop every scripted answer
//   GET  /hung            -> HungCall[]                calls held by `hang` answers
//   POST /release         { method? } -> { released }  let held calls go on
//   GET  /config          -> DriverConfig
//   POST /config          DriverConfigPatch -> DriverConfig  change the configuration
//   GET  /published       -> { [volumeId]: nodeId[] }  every volume and its nodes
//   POST /volumes         SeedVolume -> {}             add a volume without a CSI call
//   POST /publications    Publication -> {}            publish without a CSI call (creates the volume)
//   POST /publications/forget Publication -> {}        unpublish without a CSI call
//   POST /reset           -> {}                        back to the launch state
import * as v from "valibot";
import { InvalidConfigError } from "./config";
import {
  CsiMethodNameSchema,
  PublicationSchema,
  ReleaseRequestSchema,
  ScriptRequestSchema,
  SeedVolumeSchema,
  type ControlErrorBody,
  type Health,
} from "./control-protocol";
import type { DriverState } from "./driver-state";
import { checkResponseOverride } from "./response-override";
import { findCsiMethod } from "./service-definitions";

/** ControlServer is the running control API. */
export interface ControlServer {
  /** stop closes the socket (Bun removes the socket file). */
  stop(): void;
}

/** BadRequestError is a control request the server refuses with 400. */
class BadRequestError extends Error {
  override name = "BadRequestError";
}

type RouteHandler = (request: Request) => unknown;

/**
 * startControlServer serves the control API for `state` on `socketPath`.
 * It should start after the CSI server, so that a healthy control API
 * tells the launcher the driver is ready as a whole.
 */
export function startControlServer(socketPath: string, state: DriverState): ControlServer {
  const routes: Record<string, RouteHandler> = {
    "GET /healthz": (): Health => ({ ok: true, pid: process.pid, name: state.config.name }),
    "GET /calls": (request) => {
      const method = new URL(request.url).searchParams.get("method");
      return state.calls.list(method === null ? undefined : parse(CsiMethodNameSchema, method));
    },
    "POST /calls/clear": () => {
      state.calls.clear();
      return {};
    },
    "GET /script": () => state.script.pending(),
    "POST /script": async (request) => {
      const { method, answers } = parse(ScriptRequestSchema, await readJson(request));
      for (const answer of answers) {
        const problem =
          answer.response === undefined ? undefined : checkResponseOverride(findCsiMethod(method).output, answer.response);
        if (problem !== undefined) {
          throw new BadRequestError(`invalid response override for ${method}: ${problem}`);
        }
      }
      state.script.set(method, answers);
      return {};
    },
    "POST /script/clear": () => {
      state.script.clear();
      return {};
    },
    "GET /hung": () => state.gate.held(),
    "POST /release": async (request) => {
      const { method } = parse(ReleaseRequestSchema, await readJson(request));
      return { released: state.gate.release(method) };
    },
    "GET /config": () => state.config,
    "POST /config": async (request) => state.configure(await readJson(request)),
    "GET /published": () => state.volumes.published(),
    "POST /volumes": async (request) => {
      const seed = parse(SeedVolumeSchema, await readJson(request));
      state.volumes.create(seed.volumeId, seed.capacityBytes === undefined ? undefined : BigInt(seed.capacityBytes));
      for (const nodeId of seed.nodeIds ?? []) {
        state.volumes.publish(seed.volumeId, nodeId);
      }
      return {};
    },
    "POST /publications": async (request) => {
      const { volumeId, nodeId } = parse(PublicationSchema, await readJson(request));
      state.volumes.publish(volumeId, nodeId);
      return {};
    },
    "POST /publications/forget": async (request) => {
      const { volumeId, nodeId } = parse(PublicationSchema, await readJson(request));
      state.volumes.unpublish(volumeId, nodeId);
      return {};
    },
    "POST /reset": () => {
      state.reset();
      return {};
    },
  };

  const server = Bun.serve({
    unix: socketPath,
    fetch: async (request) => {
      const route = routes[`${request.method} ${new URL(request.url).pathname}`];
      if (route === undefined) {
        return errorResponse(404, `no route ${request.method} ${new URL(request.url).pathname}`);
      }
      try {
        return Response.json(await route(request));
      } catch (e: unknown) {
        if (e instanceof BadRequestError || e instanceof InvalidConfigError) {
          return errorResponse(400, e.message);
        }
        return errorResponse(500, e instanceof Error ? `${e.name}: ${e.message}` : String(e));
      }
    },
  });
  return { stop: () => void server.stop(true) };
}

/** readJson reads a request body; an empty body reads as {} so bodiless POSTs work with curl. */
async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === "") {
    return {};
  }
  try {
    return JSON.parse(text);
  } catch (e: unknown) {
    throw new BadRequestError(`body is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function parse<const S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (!result.success) {
    throw new BadRequestError(v.summarize(result.issues));
  }
  return result.output;
}

function errorResponse(status: number, error: string): Response {
  const body: ControlErrorBody = { error };
  return Response.json(body, { status });
}
