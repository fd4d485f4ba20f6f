import { describe, expect, it } from "bun:test";
import { MetricRegistry } from "../../../src/metrics/metric-registry";
import { WorkQueue } from "../../../src/queue/work-queue";
import { readOwnMemoryLimit } from "../../../src/util/cgroup-memory-limit";
import { FakeClock } from "../queue/fake-clock";

/** The samples of the exposition `text` whose metric name is `name`, as `{labels} -> value`. */
function samples(text: string, name: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (match?.[1] === name) found[match[2] ?? ""] = Number(match[3]);
  }
  return found;
}

/** The HELP line of the metric family `name`. */
function help(text: string, name: string): string | undefined {
  return text.split("\n").find((line) => line.startsWith(`# HELP ${name} `))?.slice(`# HELP ${name} `.length);
}

const ownLimit = readOwnMemoryLimit()?.limitBytes;

function queueWithMetrics(registry: MetricRegistry, name: string, clock: FakeClock): WorkQueue<string> {
  const queue = new WorkQueue<string>({ name, clock, metrics: registry.workQueueMetrics(name) });
  registry.watchQueue(queue);
  return queue;
}

describe("csi_sidecar_operations_seconds", () => {
  const publish = { method: "/csi.v1.Controller/ControllerPublishVolume", code: "OK", seconds: 0.3, migrated: false };

  it("is a histogram with upstream's help, buckets and labels, without migrated for a driver that is not migratable", async () => {
    const registry = new MetricRegistry({ processMetrics: false });
    registry.csiOperations.setDriver("hostpath.csi.k8s.io", false);
    registry.csiOperations.observe(publish);
    const text = await registry.render();
    const labels = 'driver_name="hostpath.csi.k8s.io",grpc_status_code="OK",method_name="/csi.v1.Controller/ControllerPublishVolume"';
    expect(help(text, "csi_sidecar_operations_seconds")).toBe("[ALPHA] Container Storage Interface operation duration with gRPC error code status total");
    expect(samples(text, "csi_sidecar_operations_seconds_bucket")).toEqual(
      Object.fromEntries(
        ["0.1", "0.25", "0.5", "1", "2.5", "5", "10", "15", "25", "50", "120", "300", "600", "+Inf"].map((le) => [`{le="${le}",${labels}}`, le === "0.1" || le === "0.25" ? 0 : 1]),
      ),
    );
    expect([samples(text, "csi_sidecar_operations_seconds_count"), samples(text, "csi_sidecar_operations_seconds_sum")]).toEqual([{ [`{${labels}}`]: 1 }, { [`{${labels}}`]: 0.3 }]);
  });

  it("records calls before the driver is known as unknown-driver, as upstream does for Probe and GetPluginInfo", async () => {
    const registry = new MetricRegistry({ processMetrics: false });
    registry.csiOperations.observe({ ...publish, method: "/csi.v1.Identity/Probe" });
    registry.csiOperations.setDriver("hostpath.csi.k8s.io", false);
    registry.csiOperations.observe({ ...publish, method: "/csi.v1.Identity/GetPluginCapabilities", code: "Unavailable" });
    expect(samples(await registry.render(), "csi_sidecar_operations_seconds_count")).toEqual({
      '{driver_name="unknown-driver",grpc_status_code="OK",method_name="/csi.v1.Identity/Probe"}': 1,
      '{driver_name="hostpath.csi.k8s.io",grpc_status_code="Unavailable",method_name="/csi.v1.Identity/GetPluginCapabilities"}': 1,
    });
  });

  it("adds migrated (\"false\" unless the call says otherwise) for a migratable driver, starting afresh as upstream's new metrics manager does", async () => {
    const registry = new MetricRegistry({ processMetrics: false });
    registry.csiOperations.observe({ ...publish, method: "/csi.v1.Identity/Probe" });
    registry.csiOperations.setDriver("ebs.csi.aws.com", true);
    registry.csiOperations.observe(publish);
    registry.csiOperations.observe({ ...publish, code: "DeadlineExceeded", migrated: true });
    expect(samples(await registry.render(), "csi_sidecar_operations_seconds_count")).toEqual({
      '{driver_name="ebs.csi.aws.com",grpc_status_code="OK",method_name="/csi.v1.Controller/ControllerPublishVolume",migrated="false"}': 1,
      '{driver_name="ebs.csi.aws.com",grpc_status_code="DeadlineExceeded",method_name="/csi.v1.Controller/ControllerPublishVolume",migrated="true"}': 1,
    });
  });
});

describe("rest_client metrics", () => {
  it("counts API requests by code, method and host, and the client-side rate limiter's waits by verb and host, under client-go's names and buckets", async () => {
    const registry = new MetricRegistry({ processMetrics: false });
    registry.kubeRequests.throttled("GET", "127.0.0.1:6443", 0);
    registry.kubeRequests.throttled("PATCH", "127.0.0.1:6443", 0.3);
    registry.kubeRequests.answered("GET", "127.0.0.1:6443", "200");
    registry.kubeRequests.answered("PATCH", "127.0.0.1:6443", "409");
    registry.kubeRequests.answered("PATCH", "127.0.0.1:6443", "409");
    const text = await registry.render();
    expect([
      samples(text, "rest_client_requests_total"),
      samples(text, "rest_client_rate_limiter_duration_seconds_count"),
      samples(text, "rest_client_rate_limiter_duration_seconds_sum"),
      Object.keys(samples(text, "rest_client_rate_limiter_duration_seconds_bucket")).filter((labels) => labels.includes('verb="GET"')).map((labels) => /le="([^"]+)"/.exec(labels)?.[1]),
    ]).toEqual([
      { '{code="200",method="GET",host="127.0.0.1:6443"}': 1, '{code="409",method="PATCH",host="127.0.0.1:6443"}': 2 },
      { '{verb="GET",host="127.0.0.1:6443"}': 1, '{verb="PATCH",host="127.0.0.1:6443"}': 1 },
      { '{verb="GET",host="127.0.0.1:6443"}': 0, '{verb="PATCH",host="127.0.0.1:6443"}': 0.3 },
      ["0.005", "0.025", "0.1", "0.25", "0.5", "1", "2", "4", "8", "15", "30", "60", "+Inf"],
    ]);
  });
});

describe("workqueue metrics", () => {
  /** Every family with one sample per queue: the counters, the histograms' counts and the gauges. */
  const families = [
    "workqueue_depth",
    "workqueue_adds_total",
    "workqueue_retries_total",
    "workqueue_queue_duration_seconds_count",
    "workqueue_work_duration_seconds_count",
    "workqueue_unfinished_work_seconds",
    "workqueue_longest_running_processor_seconds",
    "csi_attacher_workqueue_oldest_waiting_seconds",
  ];

  it("exports every workqueue_* series of both queues at zero before any work, with client-go's help texts", async () => {
    const registry = new MetricRegistry({ processMetrics: false });
    const clock = new FakeClock();
    queueWithMetrics(registry, "csi-attacher-va", clock);
    queueWithMetrics(registry, "csi-attacher-pv", clock);
    const text = await registry.render();
    const zeroForBoth = { '{name="csi-attacher-va"}': 0, '{name="csi-attacher-pv"}': 0 };
    expect(families.map((family) => samples(text, family))).toEqual(families.map(() => zeroForBoth));
    expect(["workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds", "workqueue_retries_total"].map((family) => help(text, family))).toEqual([
      "[BETA] Current depth of workqueue",
      "[BETA] Total number of adds handled by workqueue",
      "[BETA] How long in seconds an item stays in workqueue before being requested.",
      "[BETA] Total number of retries handled by workqueue",
    ]);
  });

  it("exports the named queues' series at zero before the queues exist, as a Go standby does, and reads each queue once it is watched", async () => {
    const registry = new MetricRegistry({ processMetrics: false, workQueueNames: ["csi-attacher-va", "csi-attacher-pv"] });
    const standby = await registry.render();
    const zeroForBoth = { '{name="csi-attacher-va"}': 0, '{name="csi-attacher-pv"}': 0 };
    expect(families.map((family) => samples(standby, family))).toEqual(families.map(() => zeroForBoth));

    const clock = new FakeClock();
    const queue = queueWithMetrics(registry, "csi-attacher-va", clock);
    queue.add("a");
    clock.step(4_000);
    const leading = await registry.render();
    expect(["workqueue_depth", "csi_attacher_workqueue_oldest_waiting_seconds"].map((family) => samples(leading, family))).toEqual([
      { '{name="csi-attacher-va"}': 1, '{name="csi-attacher-pv"}': 0 },
      { '{name="csi-attacher-va"}': 4, '{name="csi-attacher-pv"}': 0 },
    ]);
  });

  it("uses client-go's buckets, 1 µs to 1000 s by decades", async () => {
    const registry = new MetricRegistry({ processMetrics: false });
    queueWithMetrics(registry, "csi-attacher-va", new FakeClock());
    const buckets = Object.keys(samples(await registry.render(), "workqueue_work_duration_seconds_bucket")).map((labels) => {
      const le = /le="([^"]+)"/.exec(labels)?.[1];
      return le === "+Inf" ? Infinity : Number(le);
    });
    expect(buckets).toEqual([1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100, 1000, Infinity]);
  });

  it("counts depth as client-go does (dirty items, one re-added while processing included) and reads the time gauges when scraped", async () => {
    const registry = new MetricRegistry({ processMetrics: false });
    const clock = new FakeClock();
    const queue = queueWithMetrics(registry, "csi-attacher-va", clock);
    queue.add("a");
    queue.add("b");
    queue.add("a");
    clock.step(2_000);
    await queue.get();
    queue.add("a");
    clock.step(3_000);
    queue.addRateLimited("c");
    const text = await registry.render();
    const va = (family: string) => samples(text, family)['{name="csi-attacher-va"}'];
    expect(
      Object.fromEntries(
        [
          "workqueue_depth",
          "workqueue_adds_total",
          "workqueue_retries_total",
          "workqueue_queue_duration_seconds_sum",
          "workqueue_unfinished_work_seconds",
          "workqueue_longest_running_processor_seconds",
          "csi_attacher_workqueue_oldest_waiting_seconds",
        ].map((family) => [family, va(family)]),
      ),
    ).toEqual({
      // b queued, a re-added while a worker holds it.
      workqueue_depth: 2,
      workqueue_adds_total: 3,
      workqueue_retries_total: 1,
      workqueue_queue_duration_seconds_sum: 2,
      workqueue_unfinished_work_seconds: 3,
      workqueue_longest_running_processor_seconds: 3,
      csi_attacher_workqueue_oldest_waiting_seconds: 5,
    });
  });
});

describe("leader_election_master_status", () => {
  it("is absent without leader election, then reads 1 while leading and 0 while standing by when scraped", async () => {
    const registry = new MetricRegistry({ processMetrics: false });
    const before = samples(await registry.render(), "leader_election_master_status");
    let leading = true;
    registry.watchLeaderElection({ name: "external-attacher-leader-hostpath-csi-k8s-io", isLeader: () => leading });
    const asLeader = samples(await registry.render(), "leader_election_master_status");
    leading = false;
    const asStandby = samples(await registry.render(), "leader_election_master_status");
    const series = '{name="external-attacher-leader-hostpath-csi-k8s-io"}';
    expect([before, asLeader, asStandby]).toEqual([{}, { [series]: 1 }, { [series]: 0 }]);
  });
});

describe("process metrics", () => {
  it("exports process_* read from /proc: CPU, resident and virtual memory, start time, open and max fds", async () => {
    const text = await new MetricRegistry().render();
    const names = ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes", "process_start_time_seconds", "process_open_fds", "process_max_fds"];
    const values = names.map((name) => samples(text, name)[""] ?? Number.NaN);
    expect(values.every((value) => value > 0)).toBe(true);
    // Only process_*: prom-client's nodejs_* read zeros under Bun.
    expect(text.includes("nodejs_")).toBe(false);
  });

  it("counts CPU seconds from the process's start as user plus system, each scrape adding what the process used since the last", async () => {
    const before = process.cpuUsage();
    const registry = new MetricRegistry();
    const cpu = (text: string) => ({
      user: samples(text, "process_cpu_user_seconds_total")[""] ?? Number.NaN,
      system: samples(text, "process_cpu_system_seconds_total")[""] ?? Number.NaN,
      total: samples(text, "process_cpu_seconds_total")[""] ?? Number.NaN,
    });
    const first = cpu(await registry.render());
    expect(first.total).toBeGreaterThanOrEqual((before.user + before.system) / 1e6);
    // Busy until the process itself counts 30 ms more user CPU: timed by the
    // CPU clock, not the wall's, so a busy machine that takes the core away
    // only makes the loop longer.
    const userBefore = process.cpuUsage().user;
    while (process.cpuUsage().user - userBefore < 30_000) Math.sqrt(Math.random());
    const second = cpu(await registry.render());
    for (const scrape of [first, second]) expect(scrape.user + scrape.system).toBeCloseTo(scrape.total, 9);
    expect(second.user - first.user).toBeGreaterThanOrEqual(0.03);
    expect(second.total).toBeGreaterThan(first.total);
  });

  it("leaves out process_heap_bytes (VmData under Bun) and says what the JavaScript heap holds and how much of the resident memory is anonymous", async () => {
    const text = await new MetricRegistry().render();
    const value = (name: string) => samples(text, name)[""] ?? Number.NaN;
    const resident = value("process_resident_memory_bytes");
    const heapUsed = value("csi_attacher_javascript_heap_used_bytes");
    const anonymous = value("csi_attacher_resident_anonymous_memory_bytes");
    expect({
      processHeap: samples(text, "process_heap_bytes"),
      heapUsedBelowResident: heapUsed > 0 && heapUsed < resident,
      anonymousBelowResident: anonymous > 0 && anonymous < resident,
      // This test runs in whatever cgroup the machine gives it: the limit's sample is there exactly when start-up finds one.
      limit: samples(text, "csi_attacher_memory_limit_bytes"),
    }).toEqual({
      processHeap: {},
      heapUsedBelowResident: true,
      anonymousBelowResident: true,
      limit: ownLimit === undefined ? {} : { "": ownLimit },
    });
  });
});
