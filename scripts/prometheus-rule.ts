/**
 * prometheus-rule writes deploy/monitoring/alerts.yaml (a PrometheusRule)
 * from deploy/monitoring/rules.yaml. Run it after changing the rules;
 * test/unit/monitoring/prometheus-rule.test.ts fails until then.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { monitoringPaths, prometheusRuleYaml } from "./monitoring/prometheus-rule";

const generated = prometheusRuleYaml(readFileSync(monitoringPaths.rules, "utf8"));
const current = existsSync(monitoringPaths.prometheusRule) ? readFileSync(monitoringPaths.prometheusRule, "utf8") : "";
writeFileSync(monitoringPaths.prometheusRule, generated);
console.log(generated === current ? "alerts.yaml already current" : "alerts.yaml written");
