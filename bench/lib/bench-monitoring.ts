/**
 * The dashboard over a bench run: a real Prometheus (the cached build the
 * monitoring end-to-end test uses) scrapes both attachers' --http-endpoint
 * while a scenario runs, and afterwards the dashboard's main panels, their
 * queries taken from the same list as deploy/monitoring/dashboard.json, are
 * run over the scenario's time range and drawn as SVG for the report.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dashboardRows } from "../../deploy/monitoring/dashboard-panels";
import { panelPicture, pictureFile, picturedPanels, type QueriedTarget } from "../../test/ground/panel-picture";
import { freeLoopbackPorts } from "../../test/ground/free-ports";
import { waitForCondition } from "../../test/ground/managed-process";
import { PrometheusServer } from "../../test/ground/prometheus-server";
import type { AttacherKind } from "./attacher-under-test";
import { benchDriverName } from "./bench-ground";
import type { MonitoringPictures } from "./results";

type ScrapedKind = Exclude<AttacherKind, "floor">;

/**
 * Grafana's $__rate_interval is four scrape intervals at least: with the
 * 1 s scrape below, a rate sees four samples, enough to follow a run of a
 * few seconds.
 */
const rateInterval = "4s";

/** BenchMonitoring is one Prometheus scraping the attachers of the scenarios it watches. */
export class BenchMonitoring implements AsyncDisposable {
  private constructor(
    private readonly prometheus: PrometheusServer,
    private readonly dir: string,
    private readonly ports: Readonly<Record<ScrapedKind, number>>,
    private readonly kinds: readonly ScrapedKind[],
    /** Unix seconds when scraping began: the pictures' time axis starts here. */
    private readonly startedAt: number,
  ) {}

  /**
   * start runs Prometheus on a static config naming one loopback port per
   * attacher kind, labelled pod="ours" and pod="go" so the panels' $pod
   * variable tells them apart. A kind is down while the other runs: the
   * panels show a gap there, as Grafana does. Returns once Prometheus has
   * tried every port, so the first run is scraped from its start.
   */
  static async start(binary: string, kinds: readonly ScrapedKind[]): Promise<BenchMonitoring> {
    const dir = mkdtempSync(join(tmpdir(), "bench-prometheus-"));
    const ports = await freeLoopbackPorts(["ours", "go"]);
    const prometheus = await PrometheusServer.start({
      binary,
      dir,
      targets: kinds.map((kind) => ({ address: `127.0.0.1:${ports[kind]}`, labels: { namespace: "bench", pod: kind } })),
      // The pictures need no alerts.
      rules: "groups: []\n",
    });
    await waitForCondition(async () => (await prometheus.targetsTried()) === kinds.length, { description: "Prometheus scraping both ports", timeoutMs: 30_000, intervalMs: 250 });
    return new BenchMonitoring(prometheus, dir, ports, kinds, Date.now() / 1000);
  }

  /** endpointArgs is the flag that makes an attacher of `kind` export its metrics where Prometheus scrapes that kind. */
  endpointArgs(kind: AttacherKind): string[] {
    return kind === "floor" ? [] : [`--http-endpoint=127.0.0.1:${this.ports[kind]}`];
  }

  /**
   * pictures runs every target of the main panels over the time since
   * start, with the dashboard's variables filled in (the bench's driver,
   * both pods), and draws each panel. A panel whose queries returned no
   * number (no errors, no leader election in the bench) is named in
   * `empty` and not drawn.
   */
  async pictures(scenario: string, fileDir: string): Promise<MonitoringPictures> {
    const end = Date.now() / 1000;
    const fill = (expr: string) => expr.replaceAll("$driver", benchDriverName).replaceAll("$pod", this.kinds.join("|")).replaceAll("$__rate_interval", rateInterval);
    const panels = dashboardRows.flatMap((row) => row.panels).filter((panel) => picturedPanels.includes(panel.title));
    const pictures: MonitoringPictures["panels"][number][] = [];
    const empty: string[] = [];
    for (const panel of panels) {
      const queried: QueriedTarget[] = [];
      // cAdvisor and kube-state-metrics do not run on the bench ground.
      for (const target of panel.targets.filter((one) => one.source === "both" || one.source === "ours")) {
        queried.push({ legendFormat: target.legendFormat, series: await this.prometheus.queryRange(fill(target.expr), this.startedAt, end, 1) });
      }
      if (!queried.some((target) => target.series.some((series) => series.values.some(([, value]) => Number.isFinite(Number(value)))))) {
        empty.push(panel.title);
        continue;
      }
      pictures.push({ title: panel.title, file: join(fileDir, pictureFile(panel.title)), svg: panelPicture(panel.title, panel.unit, queried, this.startedAt) });
    }
    return {
      scenario,
      description: `Prometheus scraped ours (pod="ours") and Go (pod="go") every second through --http-endpoint; the panels' queries ran over the ${Math.round(end - this.startedAt)} s of the scenario at a 1 s step, with $driver=${benchDriverName} and $__rate_interval=${rateInterval}. Each attacher's runs follow one another (ours, then Go, per round and cell): a series is absent while the other kind runs.`,
      panels: pictures,
      empty,
    };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.prometheus[Symbol.asyncDispose]();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
