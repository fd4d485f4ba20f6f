/**
 * Tells which source module a line of a compiled binary's bundle belongs
 * to. `bun build --compile` keeps the text of each chunk of the bundle in
 * the executable (each starts with "// @bun" and ends with a NUL), and a
 * bundle built without --minify (scripts/build.ts --profiling) marks where
 * each module's code starts with a comment naming it (// src/kube/store.ts).
 * JSC's JIT dump names a chunk (/$bunfs/root/main-hgfbypfb.js) and a line
 * for each piece of code (jit-dump.ts); this turns them into modules, for
 * bench/jit-profile.ts.
 *
 * The executable keeps the chunks' names apart from their texts, in a
 * table of Bun's own layout; rather than read that, each name is matched to
 * the chunk whose lines hold the names of the functions the dump says start
 * there.
 */
import { existsSync, readFileSync } from "node:fs";
import type { JitCodeLoad } from "./jit-dump";

/** How a bundle chunk starts. */
const chunkStart = "// @bun";
/** What JSC names a function whose name it has not worked out. */
const unnamed = "<name not materialized>";

/** ModuleStart: from `line` (1-based) on, the chunk holds `module`'s code. */
interface ModuleStart {
  readonly line: number;
  readonly module: string;
}

/** Chunk is one chunk's lines and where its modules start. */
interface Chunk {
  readonly lines: readonly string[];
  readonly starts: readonly ModuleStart[];
}

/** BundledModules maps (chunk file, line) to the module at that line. */
export class BundledModules {
  private constructor(private readonly chunks: ReadonlyMap<string, Chunk>) {}

  /**
   * fromExecutable reads the chunks of a compiled binary (its bytes) and
   * names each file that `loads` cite after the chunk whose lines hold the
   * most of the function names cited with it.
   */
  static fromExecutable(bytes: Uint8Array, loads: readonly JitCodeLoad[]): BundledModules {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const texts: string[] = [];
    for (let at = text.indexOf(chunkStart); at >= 0; at = text.indexOf(chunkStart, at + 1)) {
      const end = text.indexOf(0, at);
      texts.push(text.toString("utf8", at, end < 0 ? text.length : end));
      if (end < 0) break;
      at = end;
    }
    return BundledModules.matching(texts, loads);
  }

  /** matching names the files `loads` cite after the best-matching of `texts` (see fromExecutable). */
  static matching(texts: readonly string[], loads: readonly JitCodeLoad[]): BundledModules {
    const candidates = texts.map(chunkOf).filter((chunk) => chunk.starts.length > 0);
    const cited = new Map<string, { name: string; line: number }[]>();
    for (const load of loads) {
      const name = functionName(load.name);
      if (load.source === undefined || name === undefined) continue;
      cited.set(load.source.file, [...(cited.get(load.source.file) ?? []), { name, line: load.source.line }]);
    }
    const chunks = new Map<string, Chunk>();
    for (const [file, functions] of cited) {
      let best: { chunk: Chunk; score: number } | undefined;
      for (const chunk of candidates) {
        const score = functions.filter(({ name, line }) => chunk.lines[line - 1]?.includes(name) === true).length;
        if (score > 0 && (best === undefined || score > best.score)) best = { chunk, score };
      }
      if (best !== undefined) chunks.set(file, best.chunk);
    }
    return new BundledModules(chunks);
  }

  /** Lines of the source dumps read so far, by path. */
  private readonly dumps = new Map<string, readonly string[] | undefined>();

  /**
   * lineAt is the text of `file`'s line `line`, trimmed: from the binary's
   * chunk, or, for Bun's own built-in modules, from the file JSC's source
   * code dump wrote (the JIT dump cites that file); undefined for any other.
   */
  lineAt(file: string, line: number): string | undefined {
    const chunk = this.chunks.get(file);
    if (chunk !== undefined) return chunk.lines[line - 1]?.trim();
    if (!this.dumps.has(file)) this.dumps.set(file, existsSync(file) ? readFileSync(file, "utf8").split("\n") : undefined);
    return this.dumps.get(file)?.[line - 1]?.trim();
  }

  /** moduleAt names the module of `file`'s line `line`, undefined for a file that is no chunk of the binary (Bun's own built-in modules). */
  moduleAt(file: string, line: number): string | undefined {
    const chunk = this.chunks.get(file);
    if (chunk === undefined) return undefined;
    let module = "(chunk prologue)";
    for (const start of chunk.starts) {
      if (start.line > line) break;
      module = start.module;
    }
    return module;
  }
}

/** functionName is the function a JIT code load is for ("JSC-Baseline: attach#AOL1k2" -> "attach"), undefined when JSC gave none. */
export function functionName(loadName: string): string | undefined {
  const name = loadName.replace(/^[^:]*:\s*/, "").replace(/#\w+$/, "");
  return name === "" || name === unnamed ? undefined : name;
}

/** chunkOf splits a chunk into lines and lists the "// path" comments that open a module file, with their 1-based lines. */
function chunkOf(text: string): Chunk {
  const lines = text.split("\n");
  const starts: ModuleStart[] = [];
  lines.forEach((line, index) => {
    const marked = /^\/\/ ((?:src|bench|gen|test|node_modules)\/\S+\.[cm]?[jt]s)$/.exec(line);
    if (marked?.[1] !== undefined) starts.push({ line: index + 1, module: marked[1] });
  });
  return { lines, starts };
}
