import { describe, expect, it } from "bun:test";
import { klogTimestamp } from "../../../src/log/klog-timestamp";

/** klog's time of day made from scratch for every call: what the kept second must always equal. */
function fromScratch(time: number, utc: boolean): string {
  const date = new Date(Math.floor(time));
  const fields = utc
    ? [date.getUTCMonth() + 1, date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()]
    : [date.getMonth() + 1, date.getDate(), date.getHours(), date.getMinutes(), date.getSeconds()];
  const [month, day, hours, minutes, seconds] = fields.map((n) => String(n).padStart(2, "0"));
  const micros = Math.min(999_999, Math.round((time % 1000) * 1000));
  return `${month}${day} ${hours}:${minutes}:${seconds}.${String(micros).padStart(6, "0")}`;
}

describe("klog's timestamp", () => {
  it("is what the Date's fields say, whether the second was kept or is new, forwards, backwards, local or UTC", () => {
    // A zone other than UTC, so that a second kept for local time cannot pass for UTC's.
    const zone = process.env["TZ"];
    process.env["TZ"] = "America/New_York";
    expect(new Date(Date.UTC(2026, 0, 1, 12)).getHours()).toBe(7);
    const start = new Date(2026, 11, 31, 23, 59, 58, 0).getTime();
    const times: number[] = [];
    // Within one second, across seconds, minutes, the day and the year, then back again.
    for (let step = 0; step < 40; step++) times.push(start + step * 123.4567);
    times.push(start + 5000.25, start + 0.5, start - 86_400_000 + 0.001, start + 1999.9999);
    try {
      for (const time of times) for (const utc of [false, true, false]) expect(`${time} ${utc}: ${klogTimestamp(time, utc)}`).toBe(`${time} ${utc}: ${fromScratch(time, utc)}`);
    } finally {
      if (zone === undefined) delete process.env["TZ"];
      else process.env["TZ"] = zone;
    }
  });

  it("prints microseconds rounded from the fraction, never rolling into the next second", () => {
    const second = new Date(2026, 10, 21, 22, 43, 33, 0).getTime();
    expect(klogTimestamp(second + 123.456, false)).toBe("1121 22:43:33.123456");
    expect(klogTimestamp(second + 999.9996, false)).toBe("1121 22:43:33.999999");
    expect(klogTimestamp(second, false)).toBe("1121 22:43:33.000000");
  });
});
