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

/** A function a caller called into; its caller's frame is the call site. */
export type EntryPoint = (...args: never[]) => unknown;

/**
 * callSite returns where `entry` (a logger method) was called from: the
 * frame just below it. It asks the engine for that one frame only
 * (`Error.captureStackTrace` stops at `entry`, and the limit of 1 leaves out
 * the rest), ~1.6 µs in the compiled binary against ~12 µs for a whole
 * source-mapped stack, which was ~5 % of the CPU under load at -v=2
 * (bun-csi-attacher#8). Call it only for lines that are printed. The
 * compiled binary's build gives each logger call its site instead
 * (scripts/build/log-call-sites.ts): this runs there only for --vmodule's
 * question, and everywhere when run from source.
 */
export function callSite(entry: EntryPoint): CallSite | undefined {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1;
  Error.captureStackTrace(holder, entry);
  Error.stackTraceLimit = limit;
  // holder.stack is the "Error" headline, then the one frame.
  const frame = holder.stack?.split("\n")[1];
  return frame === undefined ? undefined : parseFrame(frame);
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
