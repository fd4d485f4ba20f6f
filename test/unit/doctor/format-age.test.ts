import { describe, expect, it } from "bun:test";
import { formatAge } from "../../../src/doctor/format-age";

describe("formatAge", () => {
  it("prints ages as kubectl's AGE column does", () => {
    const s = 1000;
    const m = 60 * s;
    const h = 60 * m;
    const d = 24 * h;
    expect([45 * s, 119 * s, 3 * m + 12 * s, 5 * m, 42 * m, 5 * h, 47 * h, 2 * d + 3 * h, 3 * d, 9 * d + 5 * h].map(formatAge)).toEqual([
      "45s",
      "119s",
      "3m12s",
      "5m",
      "42m",
      "5h",
      "47h",
      "2d3h",
      "3d",
      "9d",
    ]);
  });
});
