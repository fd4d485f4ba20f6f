import { describe, expect, it } from "bun:test";
import { KubeApiError } from "../../../src/kube/errors";
import type { KubeClient } from "../../../src/kube/http-client";
import type { KubeObject } from "../../../src/kube/objects/object-meta";
import { initialEventsEndAnnotation, listWatchBackoff, Reflector } from "../../../src/kube/reflector";
import { Store } from "../../../src/kube/store";
import { Logger } from "../../../src/log/logger";
import { Backoff } from "../../../src/util/backoff";

// What the reflector does with the real API server is tested against it
// (test/e2e/watch-list.test.ts, api-server-restart.test.ts); here its retry
// policy, and the order of its requests against a scripted server.
describe("reflector", () => {
  it("backs a failed list or watch off as client-go's reflector does: 800 ms doubling to 30 s, and starts over after a success", () => {
    const backoff = new Backoff(listWatchBackoff);
    const first = Array.from({ length: 8 }, () => backoff.next());
    backoff.reset();
    expect({ first, afterReset: backoff.next() }).toEqual({ first: [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000], afterReset: 800 });
  });
});

/** One answer of the fake server: a watch stream's events (then its end), or a failure. */
type Answer = { events: unknown[] } | { fails: Error } | { page: { metadata: { resourceVersion: string; continue?: string }; items: unknown[] } };

/**
 * A fake API server for one reflector: it hands out `answers` in order, one
 * per request (a watch stream, or a list page), and records each request's
 * path. Once the answers run out the reflector's signal is aborted.
 */
function fakeServer(answers: Answer[], stop: AbortController): { client: KubeClient; requests: string[] } {
  const requests: string[] = [];
  const next = (path: string): Answer => {
    requests.push(path);
    const answer = answers.shift();
    if (answers.length === 0) queueMicrotask(() => stop.abort());
    if (answer === undefined) throw new Error(`no answer left for ${path}`);
    return answer;
  };
  const client = {
    get(path: string): Promise<unknown> {
      const answer = next(path);
      if ("fails" in answer) return Promise.reject(answer.fails);
      if ("page" in answer) return Promise.resolve(answer.page);
      return Promise.reject(new Error(`a list page was asked for, the answer is a watch: ${path}`));
    },
    async *stream(path: string): AsyncGenerator<unknown> {
      const answer = next(path);
      if ("fails" in answer) throw answer.fails;
      if (!("events" in answer)) throw new Error(`a watch was opened, the answer is a list page: ${path}`);
      for (const event of answer.events) yield event;
    },
  };
  return { client: client as unknown as KubeClient, requests };
}

const object = (name: string, resourceVersion: string): KubeObject => ({ metadata: { name, resourceVersion } });
const added = (name: string, resourceVersion: string) => ({ type: "ADDED", object: object(name, resourceVersion) });
const modified = (name: string, resourceVersion: string) => ({ type: "MODIFIED", object: object(name, resourceVersion) });
const initialEventsEnd = (resourceVersion: string) => ({ type: "BOOKMARK", object: { metadata: { resourceVersion, annotations: { [initialEventsEndAnnotation]: "true" } } } });

async function runReflector(answers: Answer[], store = new Store<KubeObject>()) {
  const stop = new AbortController();
  const server = fakeServer(answers, stop);
  const lines: string[] = [];
  const log = new Logger({ verbosity: 2, sink: (line) => lines.push(line) });
  const reflector = new Reflector<KubeObject>({ client: server.client, path: "/api/v1/things", kind: "Thing", parse: (raw) => raw as KubeObject, store, log, backoff: { initialMs: 1, factor: 1, maxMs: 1 } });
  let synced = false;
  void reflector.waitForSync().then(() => {
    synced = true;
  });
  await reflector.run(stop.signal);
  const query = (index: number) => Object.fromEntries(new URL(server.requests[index] ?? "", "https://x").searchParams);
  return { store, synced, requests: server.requests, query, lines, names: () => [...store.list()].map((item) => `${item.metadata.name}@${item.metadata.resourceVersion}`).sort() };
}

describe("reflector sync", () => {
  it("syncs through one watch-list request, completes at the end bookmark's resourceVersion, and watches on from the last event's", async () => {
    const run = await runReflector([{ events: [added("a", "5"), added("b", "3"), initialEventsEnd("10"), modified("a", "11")] }, { events: [] }]);
    expect({ synced: run.synced, names: run.names(), requests: run.requests.length }).toEqual({ synced: true, names: ["a@11", "b@3"], requests: 2 });
    expect(run.query(0)).toMatchObject({ watch: "true", sendInitialEvents: "true", resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: "true" });
    expect(run.query(0)["resourceVersion"]).toBeUndefined();
    expect(run.query(1)).toMatchObject({ watch: "true", resourceVersion: "11" });
    expect(run.query(1)["sendInitialEvents"]).toBeUndefined();
    expect(run.lines.filter((line) => line.includes('"Listed"'))).toEqual([expect.stringContaining('kind="Thing" count=2 resourceVersion="10"')]);
  });

  it("falls back to a paged list, then a watch from the list's resourceVersion, when the server refuses the watch-list", async () => {
    const refused = new KubeApiError(422, "Invalid", "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled");
    const run = await runReflector([{ fails: refused }, { page: { metadata: { resourceVersion: "20", continue: "next" }, items: [object("a", "4")] } }, { page: { metadata: { resourceVersion: "20" }, items: [object("b", "6")] } }, { events: [] }]);
    expect({ synced: run.synced, names: run.names() }).toEqual({ synced: true, names: ["a@4", "b@6"] });
    expect([run.query(1)["limit"], run.query(2)["continue"], run.query(3)["resourceVersion"]]).toEqual(["500", "next", "20"]);
    expect(run.lines.some((line) => line.includes("The watch-list request failed, falling back to a paged list") && line.includes("WatchList feature gate"))).toBe(true);
  });

  it("takes no resourceVersion from initial events: a watch-list cut before its end bookmark is followed by a paged list, which removes what it did not name", async () => {
    const store = new Store<KubeObject>();
    store.upsert(object("gone", "1"));
    const run = await runReflector([{ events: [added("a", "7")] }, { page: { metadata: { resourceVersion: "9" }, items: [object("a", "7"), object("b", "8")] } }, { events: [] }], store);
    expect({ synced: run.synced, names: run.names(), watchFrom: run.query(2)["resourceVersion"] }).toEqual({ synced: true, names: ["a@7", "b@8"], watchFrom: "9" });
  });

  it("syncs again through a watch-list after 410 Gone, removing the objects deleted meanwhile", async () => {
    const expired = { type: "ERROR", object: { code: 410, reason: "Expired", message: "too old resource version" } };
    const run = await runReflector([{ events: [added("a", "1"), added("b", "2"), initialEventsEnd("5"), expired] }, { events: [added("b", "2"), added("c", "8"), initialEventsEnd("9")] }, { events: [] }]);
    expect({ names: run.names(), secondSync: run.query(1)["sendInitialEvents"], watchFrom: run.query(2)["resourceVersion"] }).toEqual({ names: ["b@2", "c@8"], secondSync: "true", watchFrom: "9" });
  });
});
