import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { monitoringPaths, prometheusRuleYaml } from "../../../scripts/monitoring/prometheus-rule";

const rulesText = readFileSync(monitoringPaths.rules, "utf8");
const prometheusRuleText = readFileSync(monitoringPaths.prometheusRule, "utf8");

interface RulesFile {
  groups: { name: string; rules: { alert?: string; annotations?: Record<string, string> }[] }[];
}

describe("deploy/monitoring/alerts.yaml (run `bun run scripts/prometheus-rule.ts` after changing rules.yaml)", () => {
  it("is what the generator makes of rules.yaml", () => {
    expect(prometheusRuleText).toBe(prometheusRuleYaml(rulesText));
  });

  it("holds exactly rules.yaml's groups as a PrometheusRule's spec", () => {
    const object = Bun.YAML.parse(prometheusRuleText) as { apiVersion: string; kind: string; spec: unknown };
    expect([object.apiVersion, object.kind, object.spec]).toEqual(["monitoring.coreos.com/v1", "PrometheusRule", Bun.YAML.parse(rulesText)]);
  });
});

describe("every alert", () => {
  const rules = (Bun.YAML.parse(rulesText) as RulesFile).groups.flatMap((group) => group.rules).filter((rule) => rule.alert !== undefined);
  const runbookAnchors = new Set(
    readFileSync(join(import.meta.dir, "../../../docs/runbooks.md"), "utf8")
      .split("\n")
      .filter((line) => line.startsWith("#"))
      .map((line) => `#${line.replace(/^#+\s*/, "").toLowerCase().replace(/[^a-z0-9 _-]/g, "").replaceAll(" ", "-")}`),
  );

  it("has a summary, a description and a runbook_url naming a section of docs/runbooks.md", () => {
    const incomplete = rules.filter((rule) => {
      const { summary, description, runbook_url: runbook } = rule.annotations ?? {};
      const hash = runbook?.indexOf("#") ?? -1;
      if (runbook === undefined || hash === -1) return true;
      return !summary || !description || !runbook.slice(0, hash).endsWith("/docs/runbooks.md") || !runbookAnchors.has(runbook.slice(hash));
    });
    expect([rules.length > 0, incomplete.map((rule) => rule.alert)]).toEqual([true, []]);
  });

  it("has promtool unit tests (test/monitoring/rules-test.yaml) where it fires and where it stays silent", () => {
    interface AlertTest {
      alertname: string;
      exp_alerts?: unknown[];
    }
    const tests = (Bun.YAML.parse(readFileSync(join(import.meta.dir, "../../monitoring/rules-test.yaml"), "utf8")) as { tests: { alert_rule_test: AlertTest[] }[] }).tests.flatMap(
      (test) => test.alert_rule_test,
    );
    const untested = rules
      .map((rule) => rule.alert)
      .filter((alert) => {
        const cases = tests.filter((test) => test.alertname === alert);
        return !cases.some((test) => (test.exp_alerts ?? []).length > 0) || !cases.some((test) => (test.exp_alerts ?? []).length === 0);
      });
    expect(untested).toEqual([]);
  });
});
