/**
 * `bun run bench/fetch-protocol.ts [--rounds 6] [--requests 3000]`: Bun's fetch
 * to kube-apiserver over HTTP/1.1 against HTTP/2 (TLS ALPN, `protocol:
 * "http2"`), client CPU per request. Starts a test ground with one VA; each
 * measurement is a fresh process with the binary's JIT tiers (DFG and FTL
 * off) that opens three watches (the attacher's VA, PV and CSINode) and
 * sends `--requests` merge patches to the VA's status, 10 in flight (the
 * attacher's default workers), as our client sends them. HTTP/1.1 then
 * HTTP/2 in every round; ratios are medians of the rounds' pairs.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { AdminClient, createIfAbsent } from "../test/ground/admin-client";
import { stopAllManaged } from "../test/ground/managed-process";
import { startTestCluster } from "../test/ground/test-cluster";
import { csiNode, paths, persistentVolume, volumeAttachment } from "../test/ground/objects";
import { measureInChild } from "./lib/measured-child";
import { median } from "./lib/stats";

const protocols = ["http1.1", "http2"] as const;
type Protocol = (typeof protocols)[number];

interface Measurement {
  readonly microsPerRequest: number;
  readonly requestsPerSecond: number;
  readonly sockets: number;
  readonly peakMiB: number;
  readonly watchEvents: number;
}

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "6" },
    requests: { type: "string", default: "3000" },
    child: { type: "string" },
    server: { type: "string" },
    "token-file": { type: "string" },
    ca: { type: "string" },
  },
});

if (values.child !== undefined) {
  console.log(JSON.stringify(await patchLoop(values.child as Protocol, values.server ?? "", readFileSync(values["token-file"] ?? "", "utf8"), readFileSync(values.ca ?? "", "utf8"), Number(values.requests))));
} else {
  await compare(Number(values.rounds), Number(values.requests));
}

async function patchLoop(protocol: Protocol, server: string, token: string, ca: string, requests: number): Promise<Measurement> {
  const headers = { Authorization: `Bearer ${token}`, Accept: "application/json", "User-Agent": "csi-attacher" };
  const init = { tls: { ca }, protocol };
  const stop = new AbortController();
  let watchEvents = 0;
  const watches = [paths.volumeAttachments, paths.persistentVolumes, paths.csiNodes].map(async (path) => {
    try {
      const response = await fetch(`${server}${path}?watch=true&allowWatchBookmarks=true&timeoutSeconds=300`, { ...init, headers, signal: stop.signal });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        for (const byte of value) if (byte === 10) watchEvents++;
      }
    } catch (e: unknown) {
      if (!stop.signal.aborted) throw e;
    }
  });
  const patchHeaders = { ...headers, "Content-Type": "application/merge-patch+json" };
  const send = async (i: number) => {
    const body = JSON.stringify({ status: { attached: true, attachmentMetadata: { round: String(i) } } });
    const response = await fetch(`${server}${paths.volumeAttachment("va-0")}/status`, { ...init, method: "PATCH", headers: patchHeaders, body });
    if (!response.ok) throw new Error(`PATCH: ${response.status} ${await response.text()}`);
    JSON.parse(await response.text());
  };
  // Warm: the connections are made and the code has run once.
  for (let i = 0; i < 50; i++) await send(i);
  const started = process.cpuUsage();
  const wallStarted = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (next < requests) await send(next++);
  }));
  const cpu = process.cpuUsage(started);
  const wallSeconds = (performance.now() - wallStarted) / 1000;
  const port = new URL(server).port;
  const ss = Bun.spawnSync(["ss", "-tnp"]).stdout.toString();
  const sockets = ss.split("\n").filter((line) => line.includes(`:${port} `) && line.includes(`pid=${process.pid},`)).length;
  stop.abort();
  await Promise.all(watches);
  const peakKiB = Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? "0");
  return { microsPerRequest: (cpu.user + cpu.system) / requests, requestsPerSecond: requests / wallSeconds, sockets, peakMiB: peakKiB / 1024, watchEvents };
}

async function compare(rounds: number, requests: number): Promise<void> {
  const cluster = await startTestCluster();
  try {
    const admin = new AdminClient(cluster);
    await createIfAbsent(admin, paths.csiNodes, csiNode("node-0", [{ name: "bench.csi.test", nodeID: "node-0-id" }]));
    await createIfAbsent(admin, paths.persistentVolumes, persistentVolume("pv-0", { driver: "bench.csi.test", volumeHandle: "vol-0" }));
    await createIfAbsent(admin, paths.volumeAttachments, volumeAttachment("va-0", "bench.csi.test", "node-0", "pv-0"));
    // The token goes to the children in a file, not on their command lines.
    const caFile = `${cluster.dir}/fetch-protocol-ca.pem`;
    const tokenFile = `${cluster.dir}/fetch-protocol-token`;
    await Bun.write(caFile, cluster.caPem);
    await Bun.write(tokenFile, cluster.adminToken);
    const runs: Record<Protocol, Measurement[]> = { "http1.1": [], http2: [] };
    for (let round = 0; round < rounds; round++) {
      for (const protocol of protocols) {
        const args = ["--child", protocol, "--server", cluster.server, "--token-file", tokenFile, "--ca", caFile, "--requests", String(requests)];
        runs[protocol].push(await measureInChild<Measurement>(import.meta.path, args));
      }
    }
    const figures = ["microsPerRequest", "requestsPerSecond", "sockets", "peakMiB", "watchEvents"] as const;
    console.log(`${rounds} rounds of ${requests} status patches, 10 in flight, three watches open`);
    console.log("| figure | HTTP/1.1 | HTTP/2 | HTTP/2 / HTTP/1.1 (median of pairs) | pairs |");
    console.log("|---|---:|---:|---:|---|");
    for (const figure of figures) {
      const pairs = runs["http1.1"].map((h1, round) => (runs.http2[round] as Measurement)[figure] / h1[figure]);
      const med = (protocol: Protocol) => median(runs[protocol].map((run) => run[figure])).toFixed(1);
      console.log(`| ${figure} | ${med("http1.1")} | ${med("http2")} | ${median(pairs).toFixed(3)}x | ${pairs.map((pair) => pair.toFixed(2)).join(" ")} |`);
    }
  } finally {
    await cluster.stop();
    await stopAllManaged();
  }
}
