// Scripted answers: per CSI method, a queue of answers that calls consume in
// order before the driver falls back to its normal behaviour.
import type { JsonValue } from "@bufbuild/protobuf";
import type { CsiMethodName, ScriptedAnswer } from "./control-protocol";
import { parseStatusCode } from "./status-codes";
import type { StatusDetail } from "./status-details";

/** Answer is a scripted answer with its defaults filled in. */
export interface Answer {
  /** gRPC status code; 0 means succeed. */
  readonly code: number;
  readonly message: string | undefined;
  /** Status details of a failure; empty for none. */
  readonly details: readonly StatusDetail[];
  readonly delayMs: number;
  readonly hang: boolean;
  /** Proto3 JSON fields replacing the normal response's. */
  readonly response: Readonly<Record<string, JsonValue>> | undefined;
  readonly apply: boolean;
  readonly disconnect: boolean;
  readonly volumeId: string | undefined;
}

/** PendingAnswer is a queued answer as GET /script shows it. */
export interface PendingAnswer extends ScriptedAnswer {
  /** Calls this answer will still serve. */
  readonly remaining: number | "always";
}

interface QueuedAnswer {
  readonly answer: Answer;
  readonly source: ScriptedAnswer;
  /** Calls left to serve; Infinity for `always`. Never 0: used-up answers leave the queue. */
  remaining: number;
}

/**
 * Script holds the scripted answers of every method. A call takes the first
 * answer of its method's queue that matches its volume; answers for other
 * volumes stay queued for their own calls, so a test can script two
 * volumes' failures independently.
 */
export class Script {
  readonly #queues = new Map<CsiMethodName, QueuedAnswer[]>();

  /**
   * set replaces the queue of one method; an empty list clears it. Answers
   * must already be validated (ScriptedAnswerSchema).
   */
  set(method: CsiMethodName, answers: readonly ScriptedAnswer[]): void {
    if (answers.length === 0) {
      this.#queues.delete(method);
      return;
    }
    this.#queues.set(
      method,
      answers.map((source) => ({
        answer: resolveAnswer(source),
        source,
        remaining: source.always === true ? Number.POSITIVE_INFINITY : (source.times ?? 1),
      })),
    );
  }

  /**
   * take consumes one answer for a call of `method` concerning `volumeId`
   * (undefined for calls about no volume), or returns undefined when no
   * answer matches and the normal behaviour should run.
   */
  take(method: CsiMethodName, volumeId: string | undefined): Answer | undefined {
    const queue = this.#queues.get(method);
    if (queue === undefined) {
      return undefined;
    }
    const index = queue.findIndex((q) => q.answer.volumeId === undefined || q.answer.volumeId === volumeId);
    const queued = queue[index];
    if (queued === undefined) {
      return undefined;
    }
    queued.remaining -= 1;
    if (queued.remaining <= 0) {
      queue.splice(index, 1);
    }
    if (queue.length === 0) {
      this.#queues.delete(method);
    }
    return queued.answer;
  }

  /** pending lists the answers not used up yet, by method. */
  pending(): Partial<Record<CsiMethodName, PendingAnswer[]>> {
    const result: Partial<Record<CsiMethodName, PendingAnswer[]>> = {};
    for (const [method, queue] of this.#queues) {
      result[method] = queue.map((q) => ({
        ...q.source,
        remaining: Number.isFinite(q.remaining) ? q.remaining : "always",
      }));
    }
    return result;
  }

  /** clear drops every queue. */
  clear(): void {
    this.#queues.clear();
  }
}

function resolveAnswer(source: ScriptedAnswer): Answer {
  return {
    code: source.code === undefined ? 0 : (parseStatusCode(source.code) ?? 0),
    message: source.message,
    details: (source.details ?? []).map((detail) => ({ type: detail.type, value: Buffer.from(detail.value, "base64") })),
    delayMs: source.delayMs ?? 0,
    hang: source.hang ?? false,
    response: source.response,
    apply: source.apply ?? false,
    disconnect: source.disconnect ?? false,
    volumeId: source.volumeId,
  };
}
