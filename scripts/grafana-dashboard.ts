/**
 * grafana-dashboard writes deploy/monitoring/dashboard.json from
 * deploy/monitoring/dashboard-panels.ts. Run it after changing a panel;
 * test/unit/monitoring/dashboard.test.ts fails until then.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dashboardJson, dashboardPath } from "../deploy/monitoring/dashboard-panels";

const generated = dashboardJson();
const current = existsSync(dashboardPath) ? readFileSync(dashboardPath, "utf8") : "";
writeFileSync(dashboardPath, generated);
console.log(generated === current ? "dashboard.json already current" : "dashboard.json written");
