import { describe, expect, it } from "bun:test";
import { listWatchBackoff } from "../../../src/kube/reflector";
import { Backoff } from "../../../src/util/backoff";

// What the reflector does with the API server is tested against the real one (test/e2e); here only its retry policy.
describe("reflector", () => {
  it("backs a failed list or watch off as client-go's reflector does: 800 ms doubling to 30 s, and starts over after a success", () => {
    const backoff = new Backoff(listWatchBackoff);
    const first = Array.from({ length: 8 }, () => backoff.next());
    backoff.reset();
    expect({ first, afterReset: backoff.next() }).toEqual({ first: [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000], afterReset: 800 });
  });
});
