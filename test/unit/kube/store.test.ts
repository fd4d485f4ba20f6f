import { describe, expect, it } from "bun:test";
import { Store } from "../../../src/kube/store";
import type { KubeObject } from "../../../src/kube/objects/object-meta";

interface Thing extends KubeObject {
  readonly note: string;
}

function thing(name: string, resourceVersion: string, note = ""): Thing {
  return { metadata: { name, resourceVersion }, note };
}

function recordingStore() {
  const store = new Store<Thing>();
  const events: string[] = [];
  store.addHandlers({
    onAdd: (object) => events.push(`add ${object.metadata.name}@${object.metadata.resourceVersion}`),
    onUpdate: (old, next) => events.push(`update ${old.metadata.resourceVersion}->${next.metadata.resourceVersion}`),
    onDelete: (object) => events.push(`delete ${object.metadata.name}`),
  });
  return { store, events };
}

describe("store", () => {
  it("keeps the object our own write returned, without telling handlers", () => {
    const { store, events } = recordingStore();
    store.upsert(thing("a", "10"));
    store.applyOwnWrite(thing("a", "12", "written"));
    expect({ cached: store.get("a"), events }).toEqual({ cached: thing("a", "12", "written"), events: ["add a@10"] });
  });

  it("drops a watch event older than our own write, so the write is not redone", () => {
    const { store, events } = recordingStore();
    store.upsert(thing("a", "10"));
    store.applyOwnWrite(thing("a", "12", "written"));
    store.upsert(thing("a", "11", "stale"));
    store.upsert(thing("a", "12", "written"));
    expect({ cached: store.get("a")?.note, events }).toEqual({ cached: "written", events: ["add a@10", "update 10->12"] });
  });

  it("delivers the watch event of our own write as an update from the version handlers last saw, never as a same-version resync", () => {
    const { store, events } = recordingStore();
    store.upsert(thing("a", "10"));
    store.applyOwnWrite(thing("a", "12", "first write"));
    store.applyOwnWrite(thing("a", "14", "second write"));
    store.upsert(thing("a", "12", "first write"));
    store.upsert(thing("a", "14", "second write"));
    store.upsert(thing("a", "15", "someone else"));
    expect(events).toEqual(["add a@10", "update 10->14", "update 14->15"]);
  });

  it("never lets an own write replace a newer object from the watch", () => {
    const { store } = recordingStore();
    store.upsert(thing("a", "15", "watched"));
    store.applyOwnWrite(thing("a", "12", "late response"));
    expect(store.get("a")?.note).toBe("watched");
  });

  it("re-delivers every object as an update of itself on resync", () => {
    const { store, events } = recordingStore();
    store.upsert(thing("a", "1"));
    store.upsert(thing("b", "2"));
    store.resync();
    expect(events.slice(2)).toEqual(["update 1->1", "update 2->2"]);
  });

  it("reports objects missing from a relist as deleted", () => {
    const { store, events } = recordingStore();
    store.upsert(thing("a", "1"));
    store.upsert(thing("b", "2"));
    const relist = store.startReplace();
    relist.add(thing("b", "3"));
    relist.finish();
    expect({ names: [...store.list()].map((object) => object.metadata.name), events: events.slice(2) }).toEqual({
      names: ["b"],
      events: ["update 2->3", "delete a"],
    });
  });

  it("applies a paged relist as each object arrives, and removes the missing only when it finishes", () => {
    const { store, events } = recordingStore();
    store.upsert(thing("a", "1"));
    store.upsert(thing("b", "2"));
    const replacing = store.startReplace();
    replacing.add(thing("b", "3"));
    const midway = { b: store.get("b")?.metadata.resourceVersion, a: store.get("a") !== undefined };
    replacing.add(thing("c", "4"));
    const named = replacing.finish();
    expect(named).toBe(2);
    expect({ midway, names: [...store.list()].map((object) => object.metadata.name).sort(), events: events.slice(2) }).toEqual({
      midway: { b: "3", a: true },
      names: ["b", "c"],
      events: ["update 2->3", "add c@4", "delete a"],
    });
  });
});

describe("store and deletions", () => {
  it("does not bring back an object whose deletion the watch reported before our write's response", () => {
    const { store, events } = recordingStore();
    store.upsert(thing("a", "10"));
    store.remove(thing("a", "12"));
    store.applyOwnWrite(thing("a", "12", "response to the finalizer removal"));
    expect({ cached: store.get("a"), size: store.size, events }).toEqual({ cached: undefined, size: 0, events: ["add a@10", "delete a"] });
  });
});

describe("store and our writes the cache does not show yet", () => {
  it("keeps nothing for a write the cache shows, as every integer-versioned write applied to the cache", () => {
    const { store } = recordingStore();
    store.upsert(thing("a", "1"));
    store.applyOwnWrite(thing("a", "2", "written"));
    expect(store.unobservedOwnWrite("a")).toBeUndefined();
  });

  it("keeps an opaque version the cache does not show until the watch delivers exactly that version", () => {
    const { store } = recordingStore();
    store.upsert(thing("a", "x1"));
    // An opaque version is not applied to the cache: it cannot be ordered.
    store.applyOwnWrite(thing("a", "x2", "written"));
    const seen = [store.get("a")?.metadata.resourceVersion, store.unobservedOwnWrite("a")];
    store.upsert(thing("a", "x2", "written"));
    seen.push(store.unobservedOwnWrite("a"));
    expect(seen).toEqual(["x1", "x2", undefined]);
  });

  it("keeps nothing for an object the cache no longer holds, and drops what it kept when the object is deleted", () => {
    const { store } = recordingStore();
    store.upsert(thing("kept", "x1"));
    store.applyOwnWrite(thing("gone", "x5"));
    store.applyOwnWrite(thing("kept", "x2"));
    const before = [store.unobservedOwnWrite("gone"), store.unobservedOwnWrite("kept")];
    store.remove(thing("kept", "x1"));
    expect({ before, after: store.unobservedOwnWrite("kept") }).toEqual({ before: [undefined, "x2"], after: undefined });
  });

  it("keeps the version of the last write of several", () => {
    const { store } = recordingStore();
    store.upsert(thing("a", "x1"));
    store.applyOwnWrite(thing("a", "x2"));
    store.applyOwnWrite(thing("a", "x3", "second write"));
    // The watch delivering the first write leaves the second in flight.
    store.upsert(thing("a", "x2"));
    expect(store.unobservedOwnWrite("a")).toBe("x3");
  });

  it("keeps nothing for a write older than what the cache holds", () => {
    const { store } = recordingStore();
    store.upsert(thing("a", "15", "watched"));
    store.applyOwnWrite(thing("a", "12", "late response"));
    expect(store.unobservedOwnWrite("a")).toBeUndefined();
  });
});

describe("store and versions it already holds", () => {
  /** A parser that records what it was asked to parse and fails on an object without a note, naming it. */
  function countingParser() {
    const parsed: string[] = [];
    const parse = (raw: unknown): Thing => {
      const object = raw as { metadata: { name: string; resourceVersion: string }; note?: string };
      parsed.push(`${object.metadata.name}@${object.metadata.resourceVersion}`);
      if (object.note === undefined) throw new Error(`${object.metadata.name}: note: missing`);
      return thing(object.metadata.name, object.metadata.resourceVersion, `parsed ${object.note}`);
    };
    return { parse, parsed };
  }

  it("hands back the cached object for the very version it holds, without parsing it again", () => {
    const { store } = recordingStore();
    const { parse, parsed } = countingParser();
    store.upsert(store.parseUnlessCached({ metadata: { name: "a", resourceVersion: "10" }, note: "first" }, parse));
    const again = store.parseUnlessCached({ metadata: { name: "a", resourceVersion: "10" }, note: "copy" }, parse);
    expect({ same: again === store.get("a"), note: again.note, parsed }).toEqual({ same: true, note: "parsed first", parsed: ["a@10"] });
  });

  it("parses another version, another name and an object without a version", () => {
    const { store } = recordingStore();
    const { parse, parsed } = countingParser();
    store.upsert(thing("a", "10", "cached"));
    const notes = [
      store.parseUnlessCached({ metadata: { name: "a", resourceVersion: "11" }, note: "newer" }, parse).note,
      store.parseUnlessCached({ metadata: { name: "b", resourceVersion: "10" }, note: "other" }, parse).note,
      store.parseUnlessCached({ metadata: { name: "a", resourceVersion: "" }, note: "unversioned" }, parse).note,
      store.parseUnlessCached({ metadata: { name: "a" }, note: "no version" }, parse).note,
    ];
    expect({ notes, parsed }).toEqual({ notes: ["parsed newer", "parsed other", "parsed unversioned", "parsed no version"], parsed: ["a@11", "b@10", "a@", "a@undefined"] });
  });

  it("leaves a malformed object to the parser, whose error names what is wrong", () => {
    const { store } = recordingStore();
    const { parse } = countingParser();
    store.upsert(thing("a", "10", "cached"));
    expect(() => store.parseUnlessCached({ metadata: { name: "a", resourceVersion: "11" } }, parse)).toThrow("a: note: missing");
    expect(() => store.parseUnlessCached(null, (raw) => parse({ metadata: { name: String(raw), resourceVersion: "" } }))).toThrow("null: note: missing");
  });

  it("parses the answer to a write that deleted the object, although it carries the version the cache holds", () => {
    // kube-apiserver answers a patch that removes the last finalizer of a
    // VA being deleted with the VA as written under its last stored version.
    const { store } = recordingStore();
    const { parse, parsed } = countingParser();
    const deleting = { name: "a", resourceVersion: "10", deletionTimestamp: "2026-11-28T12:00:00Z" };
    store.upsert(store.parseUnlessCached({ metadata: { ...deleting, finalizers: ["ours"] }, note: "cached" }, parse));
    const notes = [
      store.parseUnlessCached({ metadata: deleting, note: "finalizers absent" }, parse).note,
      store.parseUnlessCached({ metadata: { ...deleting, finalizers: [] }, note: "finalizers empty" }, parse).note,
      store.parseUnlessCached({ metadata: { ...deleting, finalizers: ["ours"] }, note: "finalizer left" }, parse).note,
    ];
    expect({ notes, parsed }).toEqual({ notes: ["parsed finalizers absent", "parsed finalizers empty", "parsed cached"], parsed: ["a@10", "a@10", "a@10"] });
  });

  it("delivers the watch event of our own write, answered first, as the cached answer", () => {
    const { store, events } = recordingStore();
    const { parse, parsed } = countingParser();
    store.upsert(thing("a", "10"));
    const written = store.parseUnlessCached({ metadata: { name: "a", resourceVersion: "12" }, note: "answer" }, parse);
    store.applyOwnWrite(written);
    store.upsert(store.parseUnlessCached({ metadata: { name: "a", resourceVersion: "12" }, note: "watch copy" }, parse));
    expect({ same: store.get("a") === written, events, parsed }).toEqual({ same: true, events: ["add a@10", "update 10->12"], parsed: ["a@12"] });
  });
});
