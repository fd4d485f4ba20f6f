// Where `hang` answers hold their calls until a test lets them go, so a
// test can look at the caller while a CSI call is in flight (a timeout
// firing, a second worker blocked, a VolumeAttachment still unchanged).
import type { CsiMethodName, HungCall } from "./control-protocol";
import { Code, CsiStatusError } from "./errors";

interface HeldCall extends HungCall {
  /** Lets the call go on, or fail with `error`. */
  readonly release: (error?: CsiStatusError) => void;
}

/**
 * HangGate holds calls until released. Releasing lets go of the calls held
 * at that moment only; it does not stay open for calls that arrive later,
 * so a test should wait for the call to show up in GET /hung first.
 */
export class HangGate {
  /** Held calls by call-log seq; a call leaves when released or cancelled. */
  readonly #held = new Map<number, HeldCall>();

  /**
   * hold returns once the call is released, or rejects with Canceled when
   * the client gives up (deadline or cancellation), so a held call never
   * outlives its client.
   */
  hold(seq: number, method: CsiMethodName, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#held.delete(seq);
        reject(new CsiStatusError(Code.Canceled, "call cancelled by the client while held"));
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      this.#held.set(seq, {
        seq,
        method,
        release: (error) => {
          signal.removeEventListener("abort", onAbort);
          this.#held.delete(seq);
          if (error === undefined) {
            resolve();
          } else {
            reject(error);
          }
        },
      });
    });
  }

  /**
   * release lets go of the held calls (of one method, if given) and says
   * how many. With `error`, they fail with it instead of going on.
   */
  release(method?: CsiMethodName, error?: CsiStatusError): number {
    const chosen = [...this.#held.values()].filter((call) => method === undefined || call.method === method);
    for (const call of chosen) {
      call.release(error);
    }
    return chosen.length;
  }

  /** held lists the calls being held, oldest first. */
  held(): HungCall[] {
    return [...this.#held.values()].map(({ seq, method }) => ({ seq, method }));
  }
}
