import { describe, expect, it } from "bun:test";
import { join } from "node:path";
import { ensureComponents } from "../ground/components";

/**
 * The shipped alerting rules under Prometheus' own tools: `promtool check
 * rules` (syntax, templates, PromQL) and `promtool test rules` with
 * test/monitoring/rules-test.yaml, where every alert fires on one set of
 * series and stays silent on another. Here rather than in test/unit because
 * promtool is built from its Go module with the test ground.
 */
const repository = join(import.meta.dir, "../..");

async function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  const { promtool } = await ensureComponents();
  const child = Bun.spawn([promtool, ...args], { cwd: repository, stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, output: stdout + stderr };
}

describe("deploy/monitoring/rules.yaml", () => {
  it("passes promtool check rules", async () => {
    const { code, output } = await promtool("check", "rules", "deploy/monitoring/rules.yaml");
    expect({ code, output: output.includes("SUCCESS: 6 rules found") ? "6 rules" : output }).toEqual({ code: 0, output: "6 rules" });
  });

  it("fires every alert where its unit series say and nowhere else (promtool test rules)", async () => {
    const { code, output } = await promtool("test", "rules", "test/monitoring/rules-test.yaml");
    expect({ code, output: code === 0 ? "" : output }).toEqual({ code: 0, output: "" });
  });
});
