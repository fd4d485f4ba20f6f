import type { DescMessage, DescMethodUnary, MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type Transport, type UnaryRequest } from "@connectrpc/connect";
import { requestHeader } from "@connectrpc/connect/protocol-grpc";
import type { HeaderField } from "../http2/hpack-decoder";
import type { CallDeadlines, Expiring } from "./call-deadlines";

/** Options of a {@link UnaryCall}: what the Connect client handed the transport. */
export interface UnaryCallOptions<I extends DescMessage, O extends DescMessage> {
  readonly method: DescMethodUnary<I, O>;
  readonly url: string;
  readonly message: MessageShape<I>;
  readonly contextValues: ContextValues;
  /** The caller's own headers, if any. */
  readonly header: Parameters<Transport["unary"]>[3];
  /** The call's deadline from now, or undefined for none. */
  readonly deadlineMs: number | undefined;
  /** The caller's signal, if any: its abort cancels the call with its reason. */
  readonly callerSignal: AbortSignal | undefined;
  /** Where the call's deadline is kept: the transport's, one timer for all its calls. */
  readonly deadlines: CallDeadlines;
}

/** What a call's stream does when the call is cancelled, and how it stops listening. */
export type CancelListener = () => void;

/**
 * unaryCall is one unary call's request as Connect's interceptors see it:
 * connect-node's plain object, except that its `header` (a fetch Headers)
 * and its `signal` (an AbortController's) are made the first time
 * something reads them, by getters of the object's own, so that a copy an
 * interceptor makes (`{ ...req, header }`) reads them as it copies.
 *
 * Why: both are native objects JSC's collector frees only by a sweep, four
 * a call with the answer's two; a burst of attaches kept thousands alive at
 * its peak, and making them showed in the peak of a burst at 10 workers (A/B
 * in bench/results/README.md). The attacher's own interceptors and client
 * read neither, so a call of theirs never makes them. What the stream
 * needs of the call (its header fields, its cancellation) it reads from
 * the call's {@link UnaryCallState}, which copies carry along. For the same
 * reason the deadline is no timer of the call's own (call-deadlines.ts).
 */
export function unaryCall<I extends DescMessage, O extends DescMessage>(options: UnaryCallOptions<I, O>): UnaryRequest<I, O> {
  const state = new UnaryCallState(options);
  const req: UnaryRequest<I, O> & { readonly [callState]: UnaryCallState } = {
    stream: false,
    service: options.method.parent,
    method: options.method,
    requestMethod: "POST",
    url: options.url,
    message: options.message,
    contextValues: options.contextValues,
    [callState]: state,
    get header(): Headers {
      return state.header;
    },
    get signal(): AbortSignal {
      return state.signal;
    },
  };
  return req;
}

/** The key under which a request made by {@link unaryCall} holds its state; a spread copies it. */
const callState = Symbol("unary call state");

/** callStateOf is the state of a request {@link unaryCall} made (or a copy of one), undefined for any other. */
export function callStateOf(req: UnaryRequest): UnaryCallState | undefined {
  const state: unknown = (req as { [callState]?: unknown })[callState];
  return state instanceof UnaryCallState ? state : undefined;
}

/**
 * UnaryCallState is what one call's request holds beyond connect-node's
 * fields: whether its Headers were made (and so may have been changed),
 * and its cancellation, by its deadline or by the caller's signal.
 */
export class UnaryCallState implements Expiring {
  expiresAt = 0;
  previousExpiring: Expiring | undefined = undefined;
  nextExpiring: Expiring | undefined = undefined;
  private readonly givenHeader: UnaryCallOptions<DescMessage, DescMessage>["header"];
  private readonly deadlineMs: number | undefined;
  private readonly deadlines: CallDeadlines;
  private readonly callerSignal: AbortSignal | undefined;
  private readonly onCallerAbort: (() => void) | undefined;
  private madeHeader: Headers | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  private cancelListener: CancelListener | undefined = undefined;
  private reason: unknown = undefined;
  private isCancelled = false;

  constructor(options: UnaryCallOptions<DescMessage, DescMessage>) {
    this.givenHeader = options.header;
    this.deadlineMs = options.deadlineMs;
    this.deadlines = options.deadlines;
    const callerSignal = options.callerSignal;
    this.callerSignal = callerSignal;
    if (options.deadlineMs !== undefined) options.deadlines.add(this, options.deadlineMs);
    if (callerSignal !== undefined) {
      const onCallerAbort = () => this.cancel(callerSignal.reason);
      this.onCallerAbort = onCallerAbort;
      if (callerSignal.aborted) onCallerAbort();
      else callerSignal.addEventListener("abort", onCallerAbort);
    }
  }

  /** expire cancels the call as past its deadline, in connect-node's words and code. */
  expire(): void {
    this.cancel(new ConnectError("the operation timed out", Code.DeadlineExceeded));
  }

  /** The call's headers as connect-node's gRPC transport makes them, made at the first read. */
  get header(): Headers {
    this.madeHeader ??= requestHeader(true, this.deadlineMs, this.givenHeader);
    return this.madeHeader;
  }

  /** A signal aborted when the call is cancelled (with the cancellation's reason), made at the first read. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.isCancelled) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  get cancelled(): boolean {
    return this.isCancelled;
  }

  /** Why the call was cancelled: the deadline's ConnectError, or the caller's signal's reason. */
  get cancelReason(): unknown {
    return this.reason;
  }

  /**
   * defaultHeaderFields are the call's header fields when its Headers were
   * never made (nothing read or changed them, and the caller gave none):
   * connect-node's for its deadline, made once per deadline and shared.
   * Undefined once they were made: then the request's `header` says.
   */
  defaultHeaderFields(): readonly HeaderField[] | undefined {
    if (this.madeHeader !== undefined || this.givenHeader !== undefined) return undefined;
    return defaultHeaderFields(this.deadlineMs);
  }

  /** onCancel has `listener` called once if the call is cancelled (undefined: none); the call has one listener, its stream. */
  onCancel(listener: CancelListener | undefined): void {
    this.cancelListener = listener;
  }

  /** finish takes the call out of the deadlines and unlinks the caller's signal, once the call has ended. */
  finish(): void {
    if (this.deadlineMs !== undefined) this.deadlines.remove(this, this.deadlineMs);
    this.cancelListener = undefined;
    if (this.onCallerAbort !== undefined) this.callerSignal?.removeEventListener("abort", this.onCallerAbort);
  }

  private cancel(reason: unknown): void {
    if (this.isCancelled) return;
    this.isCancelled = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const listener = this.cancelListener;
    this.cancelListener = undefined;
    listener?.();
  }
}

function fieldsOf(headers: Headers): HeaderField[] {
  const fields: HeaderField[] = [];
  headers.forEach((value, key) => {
    fields.push([key, value]);
  });
  return fields;
}

/**
 * The default header fields by deadline. Deadlines come from the
 * attacher's flags (--timeout and the probe's), so a handful of entries;
 * the bound only keeps a caller with changing deadlines from growing it.
 */
const defaultFieldsByDeadline = new Map<number | undefined, readonly HeaderField[]>();
const mostDefaultFieldSets = 16;

function defaultHeaderFields(deadlineMs: number | undefined): readonly HeaderField[] {
  let fields = defaultFieldsByDeadline.get(deadlineMs);
  if (fields === undefined) {
    if (defaultFieldsByDeadline.size >= mostDefaultFieldSets) defaultFieldsByDeadline.clear();
    // Made by connect's own function, so the fields are the ones it would send.
    fields = Object.freeze(fieldsOf(requestHeader(true, deadlineMs, undefined)));
    defaultFieldsByDeadline.set(deadlineMs, fields);
  }
  return fields;
}
