/**
 * watchEvents: the floor programs' one watch loop. It reads one watch of
 * `path` and hands each event to `onEvent`, JSON.parse'd and nothing more,
 * until the server ends the watch.
 */
import { apiFetch, type ApiTarget } from "./floor-connections";

export async function watchEvents<T>(target: ApiTarget, path: string, onEvent: (type: string, object: T) => void): Promise<void> {
  const watch = await apiFetch(target, path, { long: true });
  const reader = watch.body?.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const chunk = await reader?.read();
    if (chunk === undefined || chunk.done) return;
    buffered += decoder.decode(chunk.value, { stream: true });
    let newline = buffered.indexOf("\n");
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.trim() !== "") {
        const event = JSON.parse(line) as { type: string; object: T };
        onEvent(event.type, event.object);
      }
      newline = buffered.indexOf("\n");
    }
  }
}
