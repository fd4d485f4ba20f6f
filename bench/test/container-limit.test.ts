import { describe, expect, it } from "bun:test";
import { classifyFailure, deadlineMs, LimitWalk } from "../lib/limit-walk";
import { parseOomKills } from "../../test/ground/memory-cgroup";

const MiB = 1024 * 1024;

/** walk runs a LimitWalk against a rule "holds at and above `threshold`" and returns the limits tried, in MiB. */
function walk(peakMiB: number, holds: (limitMiB: number) => boolean): { tried: number[]; walk: LimitWalk } {
  const limitWalk = new LimitWalk({ peakBytes: peakMiB * MiB, stepBytes: 8 * MiB, minBytes: 16 * MiB });
  const tried: number[] = [];
  for (let limit = limitWalk.next(); limit !== undefined; limit = limitWalk.next()) {
    tried.push(limit / MiB);
    const ok = holds(limit / MiB);
    limitWalk.record({ limitBytes: limit, holds: ok, seconds: 1, ...(ok ? {} : { failure: "crawl" as const }) });
  }
  return { tried, walk: limitWalk };
}

describe("container-limit walk", () => {
  it("starts at the peak rounded up to a step, then bisects down to the smallest limit that holds", () => {
    const { tried, walk: w } = walk(150, (limit) => limit >= 72);
    expect({ tried, smallest: (w.smallestHolding() ?? 0) / MiB, firstFailure: (w.firstFailure()?.limitBytes ?? 0) / MiB }).toEqual({
      tried: [152, 80, 40, 56, 64, 72],
      smallest: 72,
      firstFailure: 64,
    });
  });

  it("goes up a step at a time when the rounded-up peak fails, stops once a failure sits one step below, and gives up after three steps", () => {
    expect(walk(100, (limit) => limit >= 112).tried).toEqual([104, 112]);
    const never = walk(100, () => false);
    expect({ tried: never.tried, smallest: never.walk.smallestHolding() }).toEqual({ tried: [104, 112, 120, 128], smallest: undefined });
  });

  it("stops at the minimum when everything holds, with no failure to report", () => {
    const { tried, walk: w } = walk(40, () => true);
    expect({ tried, smallest: (w.smallestHolding() ?? 0) / MiB, firstFailure: w.firstFailure() }).toEqual({ tried: [40, 24, 16], smallest: 16, firstFailure: undefined });
  });

  it("names an OOM kill before a dead process, and a live one that missed its deadline a crawl", () => {
    expect([classifyFailure(1, false), classifyFailure(1, true), classifyFailure(0, false), classifyFailure(0, true)]).toEqual(["oom-kill", "oom-kill", "exited", "crawl"]);
  });

  it("allows twice the unconstrained time, and at least two seconds more for short runs", () => {
    expect([deadlineMs(10_000), deadlineMs(1_000)]).toEqual([20_000, 3_000]);
  });

  it("reads the OOM kill count of v1's memory.oom_control and v2's memory.events", () => {
    expect([
      parseOomKills("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"),
      parseOomKills("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n"),
      parseOomKills("oom_kill_disable 0\nunder_oom 0\n"),
    ]).toEqual([2, 1, 0]);
  });
});
