import { describe, expect, it } from "bun:test";
import { HttpServerStartError } from "../../../src/http/errors";
import { startHttpServer, type HttpServerOptions } from "../../../src/http/http-server";
import { LeaderElectionHealthAdaptor, type LeaderElectionHealthCheck } from "../../../src/http/leader-election-health";
import { Readiness } from "../../../src/http/readiness";
import { Logger } from "../../../src/log/logger";

const metrics = { contentType: "text/plain; version=0.0.4; charset=utf-8", render: async () => "# TYPE up gauge\nup 1\n" };

function start(options: Partial<HttpServerOptions> = {}) {
  const lines: string[] = [];
  const server = startHttpServer({
    address: "127.0.0.1:0",
    metrics,
    readiness: new Readiness(),
    log: new Logger({ sink: (line) => lines.push(line) }),
    ...options,
  });
  const get = async (path: string) => {
    const response = await fetch(`http://127.0.0.1:${server.port}${path}`);
    return { status: response.status, body: await response.text(), type: response.headers.get("content-type") };
  };
  return { server, get, lines };
}

describe("HTTP endpoint", () => {
  it("serves the metrics on --metrics-path in Prometheus' text format, and 404 elsewhere as Go's ServeMux does", async () => {
    await using fixture = { ...start({ metricsPath: "/custom/metrics" }), [Symbol.asyncDispose]: () => fixture.server.stop() };
    expect([await fixture.get("/custom/metrics"), await fixture.get("/metrics")]).toEqual([
      { status: 200, body: "# TYPE up gauge\nup 1\n", type: "text/plain; version=0.0.4; charset=utf-8" },
      { status: 404, body: "404 page not found\n", type: "text/plain; charset=utf-8" },
    ]);
  });

  it("answers /healthz while the process runs, and /readyz only once the driver answered Probe and the caches synced", async () => {
    const readiness = new Readiness();
    await using fixture = { ...start({ readiness }), [Symbol.asyncDispose]: () => fixture.server.stop() };
    const before = await fixture.get("/readyz");
    readiness.satisfy("driver-probed");
    const probed = await fixture.get("/readyz");
    readiness.satisfy("caches-synced");
    const ready = await fixture.get("/readyz");
    expect([(await fixture.get("/healthz")).status, before, probed, ready].map((r) => (typeof r === "number" ? r : `${r.status} ${r.body}`))).toEqual([
      200,
      "503 not ready: waiting for driver-probed, caches-synced\n",
      "503 not ready: waiting for caches-synced\n",
      "200 ok",
    ]);
  });

  it("serves /healthz/leader-election only with leader election, failing with the elector's error as csi-lib-utils does", async () => {
    let failure: Error | undefined;
    const leaderElection: LeaderElectionHealthCheck = { check: () => failure };
    await using withElection = { ...start({ leaderElection }), [Symbol.asyncDispose]: () => withElection.server.stop() };
    await using without = { ...start(), [Symbol.asyncDispose]: () => without.server.stop() };
    const healthy = await withElection.get("/healthz/leader-election");
    failure = new Error("failed election to renew leadership on lease external-attacher-leader-x");
    const overdue = await withElection.get("/healthz/leader-election");
    expect([healthy, overdue, (await without.get("/healthz/leader-election")).status]).toEqual([
      { status: 200, body: "ok", type: "text/plain; charset=utf-8" },
      { status: 500, body: "internal server error: failed election to renew leadership on lease external-attacher-leader-x\n", type: "text/plain; charset=utf-8" },
      404,
    ]);
  });

  it("reports healthy through the adaptor until the elector is set, then the elector's verdict", () => {
    const adaptor = new LeaderElectionHealthAdaptor();
    const before = adaptor.check();
    adaptor.set({ check: () => new Error("failed election to renew leadership on lease l") });
    expect([before, adaptor.check()?.message]).toEqual([undefined, "failed election to renew leadership on lease l"]);
  });

  it("answers 500 and logs when the metrics cannot be rendered", async () => {
    const broken = { contentType: metrics.contentType, render: () => Promise.reject(new Error("collector failed")) };
    await using fixture = { ...start({ metrics: broken }), [Symbol.asyncDispose]: () => fixture.server.stop() };
    const response = await fixture.get("/metrics");
    expect([response.status, response.body, fixture.lines.some((line) => line.includes('"Failed to render metrics" err="collector failed"'))]).toEqual([
      500,
      "failed to render metrics: collector failed\n",
      true,
    ]);
  });

  it("throws HttpServerStartError naming the address when the port is taken", async () => {
    await using first = { ...start(), [Symbol.asyncDispose]: () => first.server.stop() };
    const address = `127.0.0.1:${first.server.port}`;
    const failure = (() => {
      try {
        startHttpServer({ address, metrics, readiness: new Readiness(), log: new Logger({ sink: () => {} }) });
        return undefined;
      } catch (e: unknown) {
        return e;
      }
    })();
    expect(failure).toBeInstanceOf(HttpServerStartError);
    expect((failure as Error).message).toStartWith(`failed to start the HTTP server at "${address}": `);
  });

  it("listens on every interface, IPv4 and IPv6, for :port as Go does", async () => {
    await using fixture = { ...start({ address: ":0" }), [Symbol.asyncDispose]: () => fixture.server.stop() };
    const statuses = await Promise.all(["127.0.0.1", "[::1]"].map(async (host) => (await fetch(`http://${host}:${fixture.server.port}/healthz`)).status));
    expect(statuses).toEqual([200, 200]);
  });
});
