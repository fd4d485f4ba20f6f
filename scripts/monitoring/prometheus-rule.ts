/**
 * The PrometheusRule of deploy/monitoring/alerts.yaml, made from the plain
 * rules file deploy/monitoring/rules.yaml: the rules file is the one source
 * (promtool reads it as it is), and the Prometheus Operator's object wraps
 * its groups unchanged.
 */
import { join } from "node:path";

/** Where the source and the generated object live. */
export const monitoringPaths = {
  rules: join(import.meta.dir, "../../deploy/monitoring/rules.yaml"),
  prometheusRule: join(import.meta.dir, "../../deploy/monitoring/alerts.yaml"),
} as const;

const header = `# Generated from deploy/monitoring/rules.yaml by scripts/prometheus-rule.ts: edit that file, then run
# \`bun run scripts/prometheus-rule.ts\`. The same groups as a PrometheusRule for the Prometheus Operator:
#   kubectl apply -n <namespace of your Prometheus> -f deploy/monitoring/alerts.yaml
# An Operator whose ruleSelector asks for labels (kube-prometheus-stack: release: <its release>) needs them added under metadata.labels.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: csi-attacher
  labels:
    app.kubernetes.io/name: csi-attacher
    app.kubernetes.io/component: alerting-rules
spec:
`;

/**
 * prometheusRuleYaml returns alerts.yaml's text for the rules file's text:
 * the header, then the rules file's body (its leading comment block left
 * out, since the header says where the file comes from) indented under
 * `spec:`. Block scalars keep their meaning: every line moves by the same
 * two spaces.
 */
export function prometheusRuleYaml(rulesText: string): string {
  const lines = rulesText.split("\n");
  const body = lines.slice(lines.findIndex((line) => !line.startsWith("#")));
  return header + body.map((line) => (line === "" ? line : `  ${line}`)).join("\n");
}
