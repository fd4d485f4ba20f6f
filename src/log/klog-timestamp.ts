/**
 * klogTimestamp writes klog's time of day: `mmdd hh:mm:ss.uuuuuu`, in local
 * time (or UTC), for `time` in milliseconds since the epoch with a fraction.
 *
 * Every line printed needs one, and reading a Date's local fields converts
 * through the time zone each time: at -v=2 that was a tenth of the log's
 * CPU. So the part up to the second is kept for the second it was made for
 * and made again only when the second, or the zone choice, changes; a zone
 * change (daylight saving) falls on a second's boundary, so it cannot be
 * missed.
 */
export function klogTimestamp(time: number, utc: boolean): string {
  const second = Math.floor(time / 1000);
  if (second !== lastSecond || utc !== lastUtc) {
    const date = new Date(second * 1000);
    const [month, day, hours, minutes, seconds] = utc
      ? [date.getUTCMonth(), date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()]
      : [date.getMonth(), date.getDate(), date.getHours(), date.getMinutes(), date.getSeconds()];
    lastPrefix = `${two(month + 1)}${two(day)} ${two(hours)}:${two(minutes)}:${two(seconds)}.`;
    lastSecond = second;
    lastUtc = utc;
  }
  // Sub-millisecond digits come from the fraction of `time`; rounding keeps 123.456 ms from printing as 123455 µs.
  const micros = Math.min(999_999, Math.round((time - second * 1000) * 1000));
  return `${lastPrefix}${String(micros).padStart(6, "0")}`;
}

/** The second (since the epoch) and zone choice lastPrefix was made for. */
let lastSecond = Number.NaN;
let lastUtc = false;
let lastPrefix = "";

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}
