/**
 * parseGoDuration reads Go's time.ParseDuration syntax ("15s", "1m30s",
 * "500ms", "1.5h", "-1s") into milliseconds, because every upstream flag that
 * takes a duration is parsed by Go and operators copy their values verbatim.
 * Returns undefined for anything Go would reject.
 */
const unitMilliseconds: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  "μs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const component = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

export function parseGoDuration(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    sign = rest.startsWith("-") ? -1 : 1;
    rest = rest.slice(1);
  }
  // Go accepts a bare "0" without a unit, and nothing else without one.
  if (rest === "0") return 0;
  if (rest === "") return undefined;
  let total = 0;
  while (rest !== "") {
    const match = component.exec(rest);
    if (!match) return undefined;
    const [whole, amount, unit] = match;
    if (amount === undefined || unit === undefined) return undefined;
    total += Number(amount) * (unitMilliseconds[unit] ?? Number.NaN);
    rest = rest.slice(whole.length);
  }
  return Number.isFinite(total) ? sign * total : undefined;
}

/** formatGoDuration prints milliseconds the way Go's Duration.String does, for messages and --help. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return "0s";
  const negative = ms < 0;
  let rest = Math.abs(ms);
  if (rest < 1000) return `${negative ? "-" : ""}${rest}ms`;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = rest / 1000;
  let out = "";
  if (hours > 0) out += `${hours}h`;
  if (hours > 0 || minutes > 0) out += `${minutes}m`;
  out += `${seconds}s`;
  return (negative ? "-" : "") + out;
}
