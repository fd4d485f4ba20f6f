import { describe, expect, it } from "bun:test";
import { listInPages, type PageReader } from "../../../src/kube/paged-list";

/** A reader of three pages of two items; it records each request and each item handed over, in order. */
function threePages(events: string[], failing?: string): PageReader {
  const pages: Record<string, { metadata: { resourceVersion: string; continue?: string }; items: unknown[] }> = {
    "": { metadata: { resourceVersion: "10", continue: "p2" }, items: ["a", "b"] },
    p2: { metadata: { resourceVersion: "10", continue: "p3" }, items: ["c", "d"] },
    p3: { metadata: { resourceVersion: "10" }, items: ["e", "f"] },
  };
  return {
    get<T>(path: string): Promise<T> {
      const query = new URL(path, "https://x").searchParams;
      const token = query.get("continue") ?? "";
      events.push(`get ${token || "first"} limit=${query.get("limit")}`);
      if (token === failing) return Promise.reject(new Error(`page ${token} failed`));
      return Promise.resolve(pages[token] as T);
    },
  };
}

describe("listInPages", () => {
  it("hands over every item in order and resolves with the last page's resourceVersion", async () => {
    const items: unknown[] = [];
    const resourceVersion = await listInPages(threePages([]), "/api/v1/persistentvolumes", 2, (raw) => items.push(raw));
    expect({ items, resourceVersion }).toEqual({ items: ["a", "b", "c", "d", "e", "f"], resourceVersion: "10" });
  });

  it("asks for the next page before handing over this page's items, so the server works while the caller parses", async () => {
    const events: string[] = [];
    await listInPages(threePages(events), "/api/v1/persistentvolumes", 2, (raw) => events.push(`item ${String(raw)}`));
    expect(events).toEqual(["get first limit=2", "get p2 limit=2", "item a", "item b", "get p3 limit=2", "item c", "item d", "item e", "item f"]);
  });

  it("rejects with the failure of a page asked ahead, after handing over the pages before it", async () => {
    const events: string[] = [];
    const listing = listInPages(threePages(events, "p3"), "/api/v1/persistentvolumes", 2, (raw) => events.push(`item ${String(raw)}`));
    await expect(listing).rejects.toThrow("page p3 failed");
    expect(events.filter((event) => event.startsWith("item"))).toEqual(["item a", "item b", "item c", "item d"]);
  });

  it("rejects with the caller's error when an item cannot be taken, and leaves the page asked ahead handled", async () => {
    let unhandled: unknown;
    const onUnhandled = (reason: unknown) => {
      unhandled = reason;
    };
    process.on("unhandledRejection", onUnhandled);
    try {
      const listing = listInPages(threePages([], "p2"), "/api/v1/persistentvolumes", 2, () => {
        throw new Error("bad item");
      });
      await expect(listing).rejects.toThrow("bad item");
      await Bun.sleep(5);
      expect(unhandled).toBeUndefined();
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
