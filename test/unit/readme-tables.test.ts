import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { memoryFigures } from "../../scripts/bench-figures";
import { generatedSections } from "../../scripts/generated-sections";
import { recommendedMemoryLimit } from "../e2e/support/readme-memory-limits";

/** The text between a section's markers, or undefined when the page lacks them. */
function section(text: string, markers: { start: string; end: string }): string | undefined {
  const start = text.indexOf(markers.start);
  const end = text.indexOf(markers.end);
  return start === -1 || end < start ? undefined : text.slice(start + markers.start.length, end).trim();
}

const root = join(import.meta.dir, "../..");
const relative = (path: string): string => path.slice(root.length + 1);
/** A section's name, as its start marker spells it ("flags" in `<!-- flags:start ... -->`). */
const sectionName = (markers: { start: string }): string | undefined => /^<!-- (\w+):start/.exec(markers.start)?.[1];

describe("generated tables (run `bun run readme:flags` after changing a flag, a metric or a cited report)", () => {
  for (const [path, sections] of generatedSections()) {
    const text = readFileSync(path, "utf8");
    for (const { markers, render } of sections) {
      it(`${relative(path)} shows the ${sectionName(markers)} table as its source gives it`, () => {
        expect(section(text, markers)).toBe(render());
      });
    }
  }

  it("cover the flags, the metrics, the memory limits and the ratios, each in one page", () => {
    const pages = generatedSections().map(([path, sections]) => [relative(path), sections.map(({ markers }) => sectionName(markers))]);
    expect(pages).toEqual([
      ["README.md", ["memory", "glance"]],
      ["docs/configuration.md", ["flags"]],
      ["docs/metrics-and-monitoring.md", ["metrics"]],
      ["docs/benchmarks.md", ["ratios"]],
    ]);
  });
});

describe("README.md's memory table, which test/e2e/real-node reads its limit from", () => {
  it("gives a limits.memory quantity for each size, growing with the number of VAs", () => {
    const limits = [30, 300, 1000, 3000, 10000].map((volumeAttachments) => recommendedMemoryLimit(volumeAttachments));
    expect(limits.every((limit) => /^\d+Mi$/.test(limit.quantity) && limit.bytes === Number.parseInt(limit.quantity) * 2 ** 20)).toBe(true);
    expect(limits.map((limit) => limit.bytes)).toEqual(limits.map((limit) => limit.bytes).sort((a, b) => a - b));
  });

  it("names the size it has no row for", () => {
    expect(() => recommendedMemoryLimit(31)).toThrow("has no row for 31 VAs");
  });

  it("recommends, for every size, more than the reports say that size needs", () => {
    expect(memoryFigures().filter((figure) => figure.limitMiB <= figure.oursMiB)).toEqual([]);
  });
});

describe("deploy/kubernetes/deployment.yaml's memory", () => {
  const manifest = Bun.YAML.parse(readFileSync(join(import.meta.dir, "../../deploy/kubernetes/deployment.yaml"), "utf8")) as {
    spec: { template: { spec: { containers: { name: string; resources?: { requests?: { memory?: string }; limits?: { memory?: string } } }[] } } };
  };
  const resources = manifest.spec.template.spec.containers.find((container) => container.name === "csi-attacher")?.resources;

  it("is limited to README's limits.memory for 1,000 VAs, which is also the edge cluster's row", () => {
    expect([resources?.limits?.memory, resources?.limits?.memory]).toEqual([recommendedMemoryLimit(1000).quantity, recommendedMemoryLimit(30).quantity]);
  });

  it("requests what 1,000 VAs were measured to need", () => {
    const thousand = memoryFigures().find((figure) => figure.label.startsWith("1,000"));
    expect(resources?.requests?.memory).toBe(`${thousand?.oursMiB}Mi`);
  });
});
