/** A small line chart as inline SVG, so the HTML report needs no script or network. */

/** ChartLine is one labelled polyline. */
export interface ChartLine {
  readonly label: string;
  readonly color: string;
  readonly points: readonly (readonly [number, number])[];
  /** Dashed for a second run of the same kind, so rounds stay apart. */
  readonly dashed?: boolean;
}

export interface ChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly width?: number;
  readonly height?: number;
}

const pad = { left: 56, right: 12, top: 26, bottom: 38 };

/** lineChart renders `lines` on shared linear axes starting at 0. */
export function lineChart(lines: readonly ChartLine[], options: ChartOptions): string {
  const width = options.width ?? 560;
  const height = options.height ?? 260;
  const all = lines.flatMap((l) => l.points);
  const maxX = niceCeiling(Math.max(1e-9, ...all.map((p) => p[0])));
  const maxY = niceCeiling(Math.max(1e-9, ...all.map((p) => p[1])));
  // Legend: one entry per distinct label colour, in rows that fit the width; the plot starts below them.
  const seen = new Map<string, string>();
  for (const line of lines) if (!seen.has(line.color)) seen.set(line.color, line.label.replace(/ r\d+$/, ""));
  const legend: { color: string; label: string; x: number; row: number }[] = [];
  let lx = pad.left + 8;
  let row = 0;
  for (const [color, label] of seen) {
    const entryWidth = 24 + label.length * 6;
    if (lx > pad.left + 8 && lx + entryWidth > width - pad.right) {
      lx = pad.left + 8;
      row += 1;
    }
    legend.push({ color, label, x: lx, row });
    lx += entryWidth;
  }
  const top = pad.top + row * 14;
  const plotW = width - pad.left - pad.right;
  const plotH = height - top - pad.bottom;
  const sx = (x: number) => pad.left + (x / maxX) * plotW;
  const sy = (y: number) => top + plotH - (y / maxY) * plotH;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  parts.push(`<text x="${width / 2}" y="15" text-anchor="middle" font-size="13">${escapeXml(options.title)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const y = (maxY * i) / 4;
    const x = (maxX * i) / 4;
    parts.push(`<line x1="${pad.left}" x2="${width - pad.right}" y1="${sy(y)}" y2="${sy(y)}" stroke="#ddd"/>`);
    parts.push(`<text x="${pad.left - 4}" y="${sy(y) + 4}" text-anchor="end">${formatTick(y)}</text>`);
    parts.push(`<text x="${sx(x)}" y="${height - pad.bottom + 14}" text-anchor="middle">${formatTick(x)}</text>`);
  }
  parts.push(`<text x="${pad.left + plotW / 2}" y="${height - 6}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`);
  parts.push(`<text transform="translate(12 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.yLabel)}</text>`);
  for (const line of lines) {
    if (line.points.length === 0) continue;
    const d = line.points.map((p, i) => `${i === 0 ? "M" : "L"}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join("");
    parts.push(`<path d="${d}" fill="none" stroke="${line.color}" stroke-width="1.5"${line.dashed === true ? ' stroke-dasharray="5 3"' : ""}><title>${escapeXml(line.label)}</title></path>`);
  }
  for (const entry of legend) {
    const y = pad.top + entry.row * 14;
    parts.push(`<rect x="${entry.x}" y="${y + 4}" width="10" height="10" fill="${entry.color}"/><text x="${entry.x + 14}" y="${y + 13}">${escapeXml(entry.label)}</text>`);
  }
  parts.push("</svg>");
  return parts.join("");
}

function niceCeiling(x: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(x));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= x) return step * magnitude;
  return 10 * magnitude;
}

function formatTick(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(x < 1 ? 2 : 1);
}

/** escapeXml makes text safe inside SVG/HTML. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
