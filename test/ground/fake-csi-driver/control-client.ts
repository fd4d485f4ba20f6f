// The test side of the control API: a typed client that talks HTTP/JSON to
// a fake driver's control socket with Bun's fetch({ unix }). It imports no
// gRPC code, so it is cheap to use from any test.
import type { DriverConfig, DriverConfigPatch } from "./config";
import type {
  CallRecord,
  CsiMethodName,
  Health,
  HungCall,
  Publication,
  ScriptedAnswer,
  SeedVolume,
} from "./control-protocol";
import { ControlRequestError } from "./errors";
import type { PendingAnswer } from "./script";

/** WaitOptions bound the polling of the waitFor* helpers. */
export interface WaitOptions {
  /** Give up after this long; default 10000 ms. */
  readonly timeoutMs?: number;
  /** Time between polls; default 20 ms. */
  readonly intervalMs?: number;
}

/** CallFilter picks calls for waitForCalls. */
export interface CallFilter extends WaitOptions {
  /** Only count calls that have been answered; default false (arrived is enough). */
  readonly finished?: boolean;
}

/**
 * FakeCsiDriverControl drives one fake CSI driver through its control
 * socket: script answers, release held calls, change the configuration,
 * and read the call log and publications. The waitFor* helpers poll, so
 * tests wait on conditions instead of sleeping.
 */
export class FakeCsiDriverControl {
  constructor(
    /** Path of the driver's control socket. */
    readonly socketPath: string,
  ) {}

  /** healthz answers once the driver serves CSI; it throws while it does not. */
  healthz(): Promise<Health> {
    return this.#request("GET", "/healthz");
  }

  /** calls returns the call log, of one method if given, oldest first. */
  calls(method?: CsiMethodName): Promise<CallRecord[]> {
    return this.#request("GET", method === undefined ? "/calls" : `/calls?method=${encodeURIComponent(method)}`);
  }

  /** clearCalls empties the call log. */
  async clearCalls(): Promise<void> {
    await this.#request("POST", "/calls/clear");
  }

  /** script replaces the scripted answers of one method; an empty list clears them. */
  async script(method: CsiMethodName, answers: readonly ScriptedAnswer[]): Promise<void> {
    await this.#request("POST", "/script", { method, answers });
  }

  /** pendingScript returns the scripted answers not used up yet. */
  pendingScript(): Promise<Partial<Record<CsiMethodName, PendingAnswer[]>>> {
    return this.#request("GET", "/script");
  }

  /** clearScripts drops every scripted answer. */
  async clearScripts(): Promise<void> {
    await this.#request("POST", "/script/clear");
  }

  /** hung lists the calls held by `hang` answers. */
  hung(): Promise<HungCall[]> {
    return this.#request("GET", "/hung");
  }

  /** release lets the held calls (of one method, if given) go on; returns how many. */
  async release(method?: CsiMethodName): Promise<number> {
    const answer = await this.#request<{ released: number }>("POST", "/release", method === undefined ? {} : { method });
    return answer.released;
  }

  /** config returns the configuration in force. */
  config(): Promise<DriverConfig> {
    return this.#request("GET", "/config");
  }

  /** configure changes the keys given and returns the resulting configuration. */
  configure(patch: DriverConfigPatch): Promise<DriverConfig> {
    return this.#request("POST", "/config", patch);
  }

  /** published maps every volume to the nodes it is published to. */
  published(): Promise<Record<string, string[]>> {
    return this.#request("GET", "/published");
  }

  /** addVolume puts a volume (optionally already published) in the table without a CSI call. */
  async addVolume(volume: SeedVolume): Promise<void> {
    await this.#request("POST", "/volumes", volume);
  }

  /** addPublication publishes a volume to a node without a CSI call, creating the volume if needed. */
  async addPublication(publication: Publication): Promise<void> {
    await this.#request("POST", "/publications", publication);
  }

  /** forgetPublication unpublishes a volume from a node without a CSI call, as a back end that detached it on its own. */
  async forgetPublication(publication: Publication): Promise<void> {
    await this.#request("POST", "/publications/forget", publication);
  }

  /** reset returns the driver to its launch state; held calls fail with Unavailable. */
  async reset(): Promise<void> {
    await this.#request("POST", "/reset");
  }

  /**
   * waitForCalls resolves with the calls of `method` once there are at
   * least `count` (answered ones only, with `finished`).
   */
  waitForCalls(method: CsiMethodName, count: number, filter: CallFilter = {}): Promise<CallRecord[]> {
    return this.waitFor(`${count} ${filter.finished === true ? "finished " : ""}${method} calls`, filter, async () => {
      const calls = (await this.calls(method)).filter((c) => filter.finished !== true || c.finishedAt !== null);
      return calls.length >= count ? calls : undefined;
    });
  }

  /** waitForHung resolves once at least `count` calls (of `method`, if given) are held. */
  waitForHung(method?: CsiMethodName, count = 1, options: WaitOptions = {}): Promise<HungCall[]> {
    return this.waitFor(`${count} held ${method ?? "CSI"} calls`, options, async () => {
      const held = (await this.hung()).filter((c) => method === undefined || c.method === method);
      return held.length >= count ? held : undefined;
    });
  }

  /**
   * waitFor polls `check` until it returns something other than undefined,
   * and throws after the timeout naming `what` it waited for.
   */
  async waitFor<T>(what: string, options: WaitOptions, check: () => Promise<T | undefined>): Promise<T> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    const intervalMs = options.intervalMs ?? 20;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = await check();
      if (result !== undefined) {
        return result;
      }
      if (Date.now() >= deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      }
      await Bun.sleep(intervalMs);
    }
  }

  async #request<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const requestLine = `${method} ${path}`;
    const response = await fetch(`http://localhost${path}`, {
      method,
      unix: this.socketPath,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    const text = await response.text();
    if (!response.ok) {
      throw new ControlRequestError(requestLine, response.status, errorMessage(text));
    }
    // The control server is ours and answers JSON of the documented shape;
    // re-validating it here would only duplicate control-server.ts.
    return JSON.parse(text) as T;
  }
}

function errorMessage(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    // ControlErrorBody: { error: string }
    if (typeof body === "object" && body !== null && "error" in body && typeof body.error === "string") {
      return body.error;
    }
  } catch (e: unknown) {
    return `${text} (not JSON: ${e instanceof Error ? e.message : String(e)})`;
  }
  return text;
}
