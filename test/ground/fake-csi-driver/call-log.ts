// The log of every CSI call the fake driver received, which tests read to
// assert what the attacher sent, in which order, and how each call ended.
import type { CallRecord, CsiMethodName } from "./control-protocol";
import type { StatusCodeName } from "./status-codes";

/** OpenCall is the handle of a running call, used to finish its record. */
export interface OpenCall {
  readonly seq: number;
  readonly method: CsiMethodName;
}

/**
 * CallLog records calls from arrival to answer. A call is logged when it
 * arrives, before any scripted delay or hang, so a test can see a held
 * call; its code and finishedAt are filled in when it is answered.
 */
export class CallLog {
  /** Records in arrival order; seq strictly increases along the array. */
  #records: CallRecord[] = [];
  /** Last seq handed out; survives clear() so seqs are never reused. */
  #lastSeq = 0;

  /**
   * begin logs an arriving call; `request` is its proto3 JSON, secrets
   * included. With a `limit`, the oldest records go once there are more
   * than `limit`, so a driver serving hundreds of thousands of calls (the
   * scale bench) keeps a bounded log; null keeps every record.
   */
  begin(method: CsiMethodName, request: Record<string, unknown>, limit: number | null = null): OpenCall {
    this.#lastSeq += 1;
    const record: CallRecord = {
      seq: this.#lastSeq,
      method,
      request,
      code: null,
      message: null,
      startedAt: new Date().toISOString(),
      finishedAt: null,
    };
    this.#records.push(record);
    // Drop in steps of a quarter of the limit, so a long run pays one
    // array shift per limit/4 calls rather than one per call.
    if (limit !== null && this.#records.length > limit) this.#records.splice(0, this.#records.length - limit + Math.floor(limit / 4));
    return { seq: record.seq, method };
  }

  /**
   * finish fills in how a call ended and returns the finished record. A
   * call cleared from the log while it ran stays cleared (undefined): the
   * test asked to forget it.
   */
  finish(call: OpenCall, code: StatusCodeName, message: string | null): CallRecord | undefined {
    // Searched from the newest end: the call finishing is nearly always recent.
    const index = this.#records.findLastIndex((r) => r.seq === call.seq);
    const record = this.#records[index];
    if (record === undefined) return undefined;
    const finished = { ...record, code, message, finishedAt: new Date().toISOString() };
    this.#records[index] = finished;
    return finished;
  }

  /** list returns the records, of one method if given, in arrival order. */
  list(method?: CsiMethodName): CallRecord[] {
    return this.#records.filter((r) => method === undefined || r.method === method);
  }

  /** clear forgets every record; seqs keep counting up. */
  clear(): void {
    this.#records = [];
  }
}
