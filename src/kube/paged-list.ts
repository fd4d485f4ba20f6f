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
 * arrives, so that no more than one page of raw JSON is alive at once.
 * Resolves with the list's resourceVersion (that of the last page), from
 * which a watch continues.
 */
export async function listInPages(reader: PageReader, path: string, pageSize: number, onItem: (raw: unknown) => void, signal?: AbortSignal): Promise<string> {
  let continueToken = "";
  let resourceVersion = "";
  do {
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (continueToken) query.set("continue", continueToken);
    const page = await reader.get<ListPage>(`${path}?${query}`, signal);
    for (const raw of page.items ?? []) onItem(raw);
    continueToken = page.metadata?.continue ?? "";
    resourceVersion = page.metadata?.resourceVersion ?? "";
  } while (continueToken !== "");
  return resourceVersion;
}
