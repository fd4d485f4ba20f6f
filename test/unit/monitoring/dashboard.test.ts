import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { dashboardJson, dashboardPath } from "../../../deploy/monitoring/dashboard-panels";

/**
 * deploy/monitoring/dashboard.json checked for what Grafana accepts without
 * a word and then shows as empty: a panel whose data source uid names no
 * data source ("datasource not found" only once opened), a panel without a
 * query, a variable a query uses that nobody defines (the query is sent with
 * `$pod` in it and matches nothing).
 */
const text = readFileSync(dashboardPath, "utf8");

interface Target {
  refId?: string;
  expr?: string;
  legendFormat?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id?: number;
  type?: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  gridPos?: { h: number; w: number; x: number; y: number };
  targets?: Target[];
}
interface Variable {
  name: string;
  type: string;
  query?: unknown;
  definition?: string;
  datasource?: { type?: string; uid?: string };
}
const model = JSON.parse(text) as { schemaVersion: number; uid: string; panels: Panel[]; templating: { list: Variable[] } };
const variables = model.templating.list;
const queryPanels = model.panels.filter((panel) => panel.type !== "row");

/** Grafana's own variables, which a query may use without defining them. */
const builtIns = new Set(["__rate_interval", "__interval", "__interval_ms", "__range", "__range_s", "__range_ms", "__dashboard", "__from", "__to"]);

/** The names of the variables `text` refers to: `$name`, `${name}`, `${name:format}`, `[[name]]`. */
function referencedVariables(text: string): string[] {
  return [...text.matchAll(/\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]/g)].map((match) => match[1] ?? match[2] ?? match[3] ?? "");
}

describe("deploy/monitoring/dashboard.json", () => {
  it("is what deploy/monitoring/dashboard-panels.ts builds (run `bun run scripts/grafana-dashboard.ts` after changing it)", () => {
    expect(text).toBe(dashboardJson());
  });

  it("uses the current schema and a datasource variable of type prometheus", () => {
    expect([model.schemaVersion >= 39, variables.filter((variable) => variable.type === "datasource").map((variable) => [variable.name, variable.query])]).toEqual([
      true,
      [["datasource", "prometheus"]],
    ]);
  });

  it("names no data source uid but the datasource variable, on every panel, query and variable", () => {
    const uids = [
      ...queryPanels.flatMap((panel) => [panel.datasource, ...(panel.targets ?? []).map((target) => target.datasource)]),
      ...variables.filter((variable) => variable.type === "query").map((variable) => variable.datasource),
    ].map((source) => `${source?.type}/${source?.uid}`);
    expect([...new Set(uids)]).toEqual(["prometheus/${datasource}"]);
  });

  it("has a query on every panel, each with its own refId", () => {
    const withoutQuery = queryPanels.filter((panel) => {
      const targets = panel.targets ?? [];
      const refIds = new Set(targets.map((target) => target.refId));
      return targets.length === 0 || targets.some((target) => !target.expr?.trim() || !target.refId) || refIds.size !== targets.length;
    });
    expect([queryPanels.length, withoutQuery.map((panel) => panel.title)]).toEqual([13, []]);
  });

  it("defines every variable a query, legend or variable refers to, each before the variables that use it", () => {
    const defined = new Set<string>();
    const undefinedUses: string[] = [];
    for (const variable of variables) {
      for (const name of referencedVariables(JSON.stringify([variable.query, variable.definition, variable.datasource]))) {
        if (!defined.has(name) && !builtIns.has(name)) undefinedUses.push(`variable ${variable.name}: $${name}`);
      }
      defined.add(variable.name);
    }
    for (const panel of queryPanels) {
      for (const name of referencedVariables(JSON.stringify([panel.title, panel.datasource, panel.targets]))) {
        if (!defined.has(name) && !builtIns.has(name)) undefinedUses.push(`panel ${panel.title}: $${name}`);
      }
    }
    expect([undefinedUses, [...defined]]).toEqual([[], ["datasource", "driver", "pod"]]);
  });

  it("gives every panel its own id and a place on the 24-column grid", () => {
    const ids = model.panels.map((panel) => panel.id);
    const offGrid = model.panels.filter(({ gridPos }) => gridPos === undefined || gridPos.x < 0 || gridPos.w < 1 || gridPos.x + gridPos.w > 24 || gridPos.h < 1);
    expect([new Set(ids).size === ids.length, ids.every((id) => typeof id === "number"), offGrid.map((panel) => panel.title)]).toEqual([true, true, []]);
  });
});
