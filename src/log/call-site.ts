/**
 * CallSite is where a log call was made, as klog prints it: the file and the
 * line. `path` is the file as the JavaScript stack names it: an absolute
 * path when run from source, `src/controller/csi-handler.ts` in the compiled
 * binary (built with an embedded source map, so stacks name source files).
 */
export interface CallSite {
  readonly path: string;
  readonly line: number;
}

// A V8/JSC stack frame ends in "path:line:column", wrapped in parentheses
// when the frame has a function name: "    at name (path:12:5)".
const frameLocation = /\(?([^\s()]+):(\d+):\d+\)?$/;

function parseFrame(frame: string): CallSite | undefined {
  const match = frameLocation.exec(frame);
  if (!match?.[1] || !match[2]) return undefined;
  return { path: match[1], line: Number(match[2]) };
}

function frames(): string[] {
  return (new Error().stack ?? "").split("\n");
}

/** ownPath is this file's own path as stacks name it, found once. */
const ownPath = frames()
  .map(parseFrame)
  .find((site) => site !== undefined)?.path;

/**
 * callerFile returns the path, as stacks name it, of the file whose code
 * called the function that calls callerFile. The logger uses it once, at
 * load, to learn its own name so that its frames can be skipped.
 */
export function callerFile(): string | undefined {
  return frames()
    .map(parseFrame)
    .find((site) => site !== undefined && site.path !== ownPath)?.path;
}

/**
 * callSite returns the first frame outside this file and outside `skip`
 * (the logger's own files): the code that logged. It builds a stack trace
 * (a few microseconds), so call it only for lines that are printed.
 */
export function callSite(skip: ReadonlySet<string>): CallSite | undefined {
  const lines = frames();
  // lines[0] is the "Error" headline, lines[1] this function.
  for (let i = 2; i < lines.length; i++) {
    const site = parseFrame(lines[i] ?? "");
    if (site === undefined || site.path === ownPath || skip.has(site.path)) continue;
    return site;
  }
  return undefined;
}

/** baseName is the last path component: what klog's text header prints (`csi-handler.ts`). */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/**
 * shortPath is the last two path components, as zap's ShortCallerEncoder
 * (component-base's JSON format) prints a caller: `controller/csi-handler.ts`.
 */
export function shortPath(path: string): string {
  const last = path.lastIndexOf("/");
  if (last <= 0) return path;
  return path.slice(path.lastIndexOf("/", last - 1) + 1);
}
