import { baseName } from "./call-site";

/** VModuleRule is one `pattern=N` of --vmodule: files matching `pattern` log up to -v N. */
export interface VModuleRule {
  readonly pattern: string;
  readonly verbosity: number;
}

interface CompiledRule {
  readonly matcher: RegExp;
  /** klog matches a pattern with a slash against the whole path, others against the file name. */
  readonly wholePath: boolean;
  readonly verbosity: number;
}

/**
 * VModule answers klog's --vmodule question: may this file log at this -v
 * level, though the global -v is lower? Patterns are globs (`*`, `?`) matched
 * against the file name without its extension (`csi-handler` for
 * csi-handler.ts, as klog drops `.go`); the first matching rule decides.
 * Answers are cached per file, since the set of files is small and fixed.
 */
export class VModule {
  private readonly rules: readonly CompiledRule[];
  private readonly cache = new Map<string, number>();
  /** The highest level any rule grants: above it no file can log, and no stack need be walked. */
  readonly maxVerbosity: number;

  constructor(rules: readonly VModuleRule[]) {
    this.rules = rules.map((rule) => ({ matcher: globToRegExp(rule.pattern), wholePath: rule.pattern.includes("/"), verbosity: rule.verbosity }));
    this.maxVerbosity = Math.max(-1, ...rules.map((rule) => rule.verbosity));
  }

  /** verbosityOf returns the -v level the file at `path` may log at, or -1 when no rule names it. */
  verbosityOf(path: string): number {
    const cached = this.cache.get(path);
    if (cached !== undefined) return cached;
    const withoutExtension = path.replace(/\.[jt]s$/, "");
    const name = baseName(withoutExtension);
    const rule = this.rules.find((candidate) => candidate.matcher.test(candidate.wholePath ? withoutExtension : name));
    const verbosity = rule?.verbosity ?? -1;
    this.cache.set(path, verbosity);
    return verbosity;
  }
}

function globToRegExp(pattern: string): RegExp {
  const body = [...pattern].map((char) => (char === "*" ? ".*" : char === "?" ? "." : char.replace(/[.+^${}()|[\]\\]/g, "\\$&"))).join("");
  // A whole-path pattern may match the end of a longer path, as klog's does.
  return pattern.includes("/") ? new RegExp(`(^|/)${body}$`) : new RegExp(`^${body}$`);
}
