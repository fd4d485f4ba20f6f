/** The one call a paged list needs: the API client, or a read-only view of it. */
export interface PageReader {
  get<T>(path: string, signal?: AbortSignal): Promise<T>;
}

interface ListPage {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[];
}

/**
 * listInPages reads a whole collection `pageSize` objects at a time, as
 * client-go's pager does, and hands each raw item to `onItem` as its page
 * arrives. The next page is asked for before this page's items are handed
 * over, so the server reads and encodes it while the caller parses and
 * stores these (with 100,000 objects, 200 pages each way): at most two
 * pages of raw JSON are alive at once, never the whole list. Resolves with
 * the list's resourceVersion (that of the last page), from which a watch
 * continues.
 */
export async function listInPages(reader: PageReader, path: string, pageSize: number, onItem: (raw: unknown) => void, signal?: AbortSignal): Promise<string> {
  const pagePath = (continueToken: string): string => {
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (continueToken) query.set("continue", continueToken);
    return `${path}?${query}`;
  };
  let page = await reader.get<ListPage>(pagePath(""), signal);
  for (;;) {
    const continueToken = page.metadata?.continue ?? "";
    const next = continueToken === "" ? undefined : reader.get<ListPage>(pagePath(continueToken), signal);
    try {
      for (const raw of page.items ?? []) onItem(raw);
    } catch (e) {
      // The list is abandoned: the page already asked for must not end as an unhandled rejection.
      next?.catch(() => undefined);
      throw e;
    }
    if (next === undefined) return page.metadata?.resourceVersion ?? "";
    page = await next;
  }
}
