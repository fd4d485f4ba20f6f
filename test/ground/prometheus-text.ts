/** One sample of Prometheus' text exposition format. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * parseSamples reads the sample lines of a text exposition (comments and
 * blank lines skipped). Enough for the attacher's own output and
 * kube-apiserver's request counts: label values with escaped quotes are not
 * expected there.
 */
export function parseSamples(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) {
      labels[pair[1] ?? ""] = pair[2] ?? "";
    }
    const raw = match[3] ?? "";
    samples.push({ name: match[1] ?? "", labels, value: raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw) });
  }
  return samples;
}
