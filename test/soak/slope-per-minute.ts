/** slopePerMinute is the least-squares slope of `value` over time, per minute. */
export function slopePerMinute<T extends { readonly atMs: number }>(samples: readonly T[], value: (sample: T) => number): number {
  const n = samples.length;
  if (n < 2) return Number.NaN;
  const xs = samples.map((sample) => sample.atMs / 60_000);
  const ys = samples.map(value);
  const meanX = xs.reduce((a, b) => a + b, 0) / n;
  const meanY = ys.reduce((a, b) => a + b, 0) / n;
  let numerator = 0;
  let denominator = 0;
  xs.forEach((x, i) => {
    numerator += (x - meanX) * ((ys[i] ?? 0) - meanY);
    denominator += (x - meanX) ** 2;
  });
  return numerator / denominator;
}
