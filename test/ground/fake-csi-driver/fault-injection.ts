// The layer between the wire and the normal behaviour: every call is
// logged, then answered by the next matching scripted answer (delay, hang,
// error, patched response) or, when there is none, by the normal handler.
import { toJson, type DescMethod, type Message } from "@bufbuild/protobuf";
import type { CsiMethodName } from "./control-protocol";
import type { DriverState } from "./driver-state";
import { Code, CsiStatusError } from "./errors";
import { overrideResponse } from "./response-override";
import type { Answer } from "./script";
import type { NormalHandler, UnaryHandler } from "./service-definitions";
import { statusCodeName } from "./status-codes";

/**
 * createFaultInjectingHandler wraps one method's normal behaviour with the
 * call log and the script. The log entry is written before any scripted
 * wait, so tests see a delayed or held call while it is in flight, and its
 * outcome is written however the call ends, cancellation included.
 */
export function createFaultInjectingHandler(
  method: DescMethod,
  name: CsiMethodName,
  normal: NormalHandler,
  state: DriverState,
): UnaryHandler {
  return async (request, signal) => {
    const call = state.calls.begin(name, requestJson(method, request), state.config.callLogLimit);
    // Whether the normal behaviour ran to the end, i.e. the call changed state.
    let applied = false;
    const runNormal = (): Message => {
      const response = normal(request);
      applied = true;
      return response;
    };
    try {
      const answer = state.script.take(name, volumeIdOf(request));
      const response = answer === undefined ? runNormal() : await answerAsScripted(answer, call.seq);
      state.finishCall(call, "OK", null, applied);
      return response;
    } catch (e: unknown) {
      const error = CsiStatusError.from(e);
      state.finishCall(call, error.codeName, error.message, applied);
      throw error;
    }

    async function answerAsScripted(answer: Answer, seq: number): Promise<Message> {
      if (answer.delayMs > 0) {
        await sleep(answer.delayMs, signal);
      }
      if (answer.hang) {
        await state.gate.hold(seq, name, signal);
      }
      if (answer.disconnect) {
        state.disconnectClients();
        // The connection is gone: nothing can answer this call any more.
        throw new CsiStatusError(Code.Unavailable, "fake driver closed the connection mid-call");
      }
      if (answer.code !== 0) {
        if (answer.apply) {
          runNormal();
        }
        const message = answer.message ?? `scripted ${statusCodeName(answer.code)} for ${name}`;
        throw new CsiStatusError(answer.code, message, undefined, answer.details);
      }
      const response = runNormal();
      return answer.response === undefined ? response : overrideResponse(method.output, response, answer.response);
    }
  };
}

/**
 * requestJson renders a request for the call log as proto3 JSON. Secrets
 * stay in: the log never leaves the test, and tests assert that the right
 * secrets were sent.
 */
function requestJson(method: DescMethod, request: Message): Record<string, unknown> {
  const json = toJson(method.input, request);
  return typeof json === "object" && json !== null && !Array.isArray(json) ? json : {};
}

/**
 * volumeIdOf finds the volume a call is about, for answers scripted for one
 * volume: volume_id, or for CreateVolume the name (which becomes the id).
 */
function volumeIdOf(request: Message): string | undefined {
  if ("volumeId" in request && typeof request.volumeId === "string") {
    return request.volumeId;
  }
  if ("name" in request && typeof request.name === "string") {
    return request.name;
  }
  return undefined;
}

/** sleep waits `ms`, or rejects with Canceled as soon as the client gives up. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new CsiStatusError(Code.Canceled, "call cancelled by the client while delayed"));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
