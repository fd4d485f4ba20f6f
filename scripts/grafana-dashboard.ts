/**
 * grafana-dashboard writes deploy/monitoring/dashboard.json from
 * scripts/monitoring/dashboard.ts. Run it after changing a panel;
 * test/unit/monitoring/dashboard.test.ts fails until then.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dashboardJson, dashboardPath } from "./monitoring/dashboard";

const generated = dashboardJson();
const current = existsSync(dashboardPath) ? readFileSync(dashboardPath, "utf8") : "";
writeFileSync(dashboardPath, generated);
console.log(generated === current ? "dashboard.json already current" : "dashboard.json written");
