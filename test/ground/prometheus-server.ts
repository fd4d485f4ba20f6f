import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freeLoopbackPorts } from "./free-ports";
import { spawnManaged, waitForCondition, type ManagedProcess } from "./managed-process";

/** One scrape target of the static config, with the labels Kubernetes service discovery would give it. */
export interface ScrapeTarget {
  /** host:port of the attacher's --http-endpoint. */
  readonly address: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface PrometheusServerOptions {
  /** The built server binary (ComponentPaths.prometheus). */
  readonly binary: string;
  /** Directory for the config, the rules, the TSDB and the logs. */
  readonly dir: string;
  /** Scraped as job "csi-attacher". */
  readonly targets: readonly ScrapeTarget[];
  /** Text of the one rules file the server evaluates. */
  readonly rules: string;
  /** Scrape and rule evaluation interval. Default "1s": the test's faults last seconds, not minutes. */
  readonly interval?: string;
}

/** One series of a range query: its labels and its [unix seconds, value] samples. */
export interface RangeSeries {
  readonly metric: Record<string, string>;
  readonly values: readonly [number, string][];
}

/** An alert as /api/v1/alerts shows it. */
export interface ActiveAlert {
  readonly labels: Record<string, string>;
  readonly state: "pending" | "firing";
}

interface ApiAnswer<T> {
  status: "success" | "error";
  data: T;
  error?: string;
}

/**
 * PrometheusServer is a real Prometheus scraping loopback targets on a
 * static config and evaluating one rules file, read through its HTTP API
 * as Grafana and Alertmanager read it.
 */
export class PrometheusServer implements AsyncDisposable {
  private constructor(
    readonly process: ManagedProcess,
    readonly url: string,
  ) {}

  static async start(options: PrometheusServerOptions): Promise<PrometheusServer> {
    const interval = options.interval ?? "1s";
    const { web } = await freeLoopbackPorts(["web"]);
    writeFileSync(join(options.dir, "rules.yaml"), options.rules);
    const scrapeConfig = {
      global: { scrape_interval: interval, evaluation_interval: interval },
      rule_files: ["rules.yaml"],
      scrape_configs: [
        {
          job_name: "csi-attacher",
          static_configs: options.targets.map((target) => ({ targets: [target.address], labels: target.labels })),
        },
      ],
    };
    // JSON is YAML: the config needs no YAML writer.
    writeFileSync(join(options.dir, "prometheus.yml"), JSON.stringify(scrapeConfig, null, 2));
    const process = spawnManaged({
      name: "prometheus",
      command: [
        options.binary,
        `--config.file=${join(options.dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(options.dir, "tsdb")}`,
        `--web.listen-address=127.0.0.1:${web}`,
        "--log.level=warn",
      ],
      logDir: options.dir,
      cwd: options.dir,
    });
    const server = new PrometheusServer(process, `http://127.0.0.1:${web}`);
    await waitForCondition(async () => (await fetch(`${server.url}/-/ready`).catch(() => undefined))?.status === 200, {
      description: "Prometheus /-/ready",
      timeoutMs: 30_000,
      intervalMs: 200,
      watch: [process],
    });
    return server;
  }

  /** queryRange runs `query` over [start, end] (unix seconds) at `stepSeconds`. */
  async queryRange(query: string, start: number, end: number, stepSeconds: number): Promise<RangeSeries[]> {
    const params = new URLSearchParams({ query, start: String(start), end: String(end), step: String(stepSeconds) });
    return (await this.api<{ result: RangeSeries[] }>(`/api/v1/query_range?${params}`)).result;
  }

  /** labelValues answers a Grafana `label_values(match, label)` variable query over [start, end]. */
  async labelValues(label: string, match: string, start: number, end: number): Promise<string[]> {
    const params = new URLSearchParams({ "match[]": match, start: String(start), end: String(end) });
    return this.api<string[]>(`/api/v1/label/${label}/values?${params}`);
  }

  /** alerts lists the pending and firing alerts. */
  async alerts(): Promise<ActiveAlert[]> {
    return (await this.api<{ alerts: ActiveAlert[] }>("/api/v1/alerts")).alerts;
  }

  /** targetsUp says how many scrape targets answered their last scrape. */
  async targetsUp(): Promise<number> {
    return (await this.activeTargets()).filter((target) => target.health === "up").length;
  }

  /**
   * targetsTried says how many scrape targets Prometheus has scraped at
   * least once, answered or not: its discovery hands targets to the
   * scrapers some seconds after start, and a process that runs before
   * then is not seen.
   */
  async targetsTried(): Promise<number> {
    return (await this.activeTargets()).filter((target) => target.health !== "unknown").length;
  }

  private async activeTargets(): Promise<{ health: string }[]> {
    return (await this.api<{ activeTargets: { health: string }[] }>("/api/v1/targets?state=active")).activeTargets;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.process.stop();
  }

  private async api<T>(path: string): Promise<T> {
    const response = await fetch(`${this.url}${path}`);
    const answer = (await response.json()) as ApiAnswer<T>;
    if (answer.status !== "success") throw new Error(`Prometheus ${path}: ${answer.error ?? response.status}`);
    return answer.data;
  }
}
