import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestCluster } from "../../ground/test-cluster";
import { selfSignedLoopbackCertificate } from "./self-signed-certificate";

/** What the proxy does to the next request it matches; each fault is used once. */
export type ProxyFault =
  /** Answer 200 with an HTML page instead of the API's JSON. */
  | { readonly kind: "garbage"; readonly match: RegExp }
  /** Pass a watch through, but cut it in the middle of its next event (an open watch too). */
  | { readonly kind: "half-frame"; readonly match: RegExp };

/**
 * CorruptingProxy is a loopback HTTP proxy in front of the real
 * kube-apiserver that forwards everything faithfully except the one
 * request a test arms it for: an API server (or something between it and
 * us) answering garbage, or a watch connection cut mid-frame.
 */
export class CorruptingProxy implements AsyncDisposable {
  readonly #server: ReturnType<typeof Bun.serve>;
  readonly #faults: ProxyFault[] = [];
  /** What the proxy did, for the test's assertions and its report. */
  readonly applied: string[] = [];
  /** Watches the proxy ended because they reached `watchLifetimeMs`. */
  watchesEnded = 0;

  /** The proxy's self-signed serving certificate, which its kubeconfig trusts. */
  readonly #certPem: string;

  /**
   * @param watchLifetimeMs  end every watch response cleanly after this long, as
   *   the API server does at a watch's timeout; default: never (the server decides).
   */
  constructor(
    private readonly cluster: TestCluster,
    private readonly watchLifetimeMs?: number,
  ) {
    const { cert, key } = selfSignedLoopbackCertificate();
    this.#certPem = cert;
    this.#server = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, tls: { cert, key }, fetch: (request) => this.#forward(request) });
  }

  /** url is where clients reach the proxy: HTTPS on loopback (client-node refuses plain HTTP without insecure-skip-tls-verify). */
  get url(): string {
    return `https://127.0.0.1:${this.#server.port}`;
  }

  /** arm queues a fault for the next request (or watch event) whose path and query match. */
  arm(fault: ProxyFault): void {
    this.#faults.push(fault);
  }

  /** kubeconfig writes a kubeconfig for the proxy with the cluster's admin token. */
  kubeconfig(dir: string): string {
    const path = join(dir, "proxy.kubeconfig");
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "proxy", cluster: { server: this.url, "certificate-authority-data": Buffer.from(this.#certPem).toString("base64") } }],
        users: [{ name: "admin", user: { token: this.cluster.adminToken } }],
        contexts: [{ name: "proxy", context: { cluster: "proxy", user: "admin" } }],
        "current-context": "proxy",
      }),
      { mode: 0o600 },
    );
    return path;
  }

  /** take removes and returns the first armed fault of `kind` matching `target`. */
  #take(kind: ProxyFault["kind"], target: string): ProxyFault | undefined {
    const index = this.#faults.findIndex((fault) => fault.kind === kind && fault.match.test(target));
    return index === -1 ? undefined : this.#faults.splice(index, 1)[0];
  }

  async #forward(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const target = url.pathname + url.search;
    if (this.#take("garbage", target) !== undefined) {
      this.applied.push(`garbage for ${target}`);
      return new Response("<html><body>502 Bad Gateway</body></html>", { status: 200, headers: { "Content-Type": "text/html" } });
    }
    const headers = new Headers(request.headers);
    headers.delete("host");
    const upstream = await fetch(this.cluster.server + target, {
      method: request.method,
      headers,
      body: request.method === "GET" || request.method === "HEAD" ? null : await request.arrayBuffer(),
      tls: { ca: this.cluster.caPem },
      signal: request.signal,
    });
    const body = upstream.body !== null && url.searchParams.get("watch") === "true" ? this.#watchBody(upstream.body, target) : upstream.body;
    return new Response(body, { status: upstream.status, headers: upstream.headers });
  }

  /**
   * Passes a watch through chunk by chunk. When a chunk with an event
   * arrives while a half-frame fault for this watch is armed (armed before
   * or after the watch opened), it sends the first half of that event and
   * ends the response there.
   */
  #watchBody(body: ReadableStream<Uint8Array>, target: string): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    let ended = false;
    let lifetime: ReturnType<typeof setTimeout> | undefined;
    const end = async (controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> => {
      if (ended) return;
      ended = true;
      clearTimeout(lifetime);
      controller.close();
      await reader.cancel();
    };
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        if (this.watchLifetimeMs !== undefined) {
          lifetime = setTimeout(() => {
            this.watchesEnded += 1;
            end(controller).catch((e: unknown) => console.error(`corrupting proxy: ending a watch: ${String(e)}`));
          }, this.watchLifetimeMs);
        }
      },
      pull: async (controller) => {
        const { done, value } = await reader.read();
        if (ended) return;
        if (done) {
          await end(controller);
          return;
        }
        const newline = value.indexOf(0x0a);
        if (newline === -1 || this.#take("half-frame", target) === undefined) {
          controller.enqueue(value);
          return;
        }
        controller.enqueue(value.subarray(0, Math.floor(newline / 2)));
        this.applied.push(`half an event for ${target}`);
        await end(controller);
      },
      cancel: async () => {
        ended = true;
        clearTimeout(lifetime);
        await reader.cancel();
      },
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#server.stop(true);
  }
}
