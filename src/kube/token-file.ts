import { readFileSync, statSync } from "node:fs";
import { realClock, type Clock } from "../util/clock";

export interface TokenFileOptions {
  /** Path of the token file, e.g. the service account's projected token. */
  readonly path: string;
  /** A token read longer ago than this is read again even if the file looks unchanged. Default 60 s (client-go's cachingTokenSource). */
  readonly maxAgeMs?: number;
  /** How often, at most, the file is stat()ed to notice a rotation early. Default 1 s; 0 checks on every call. */
  readonly checkIntervalMs?: number;
  /** Times the re-reads and the checks. Default: realClock. */
  readonly clock?: Clock;
}

interface FileStamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

/** resolveTokenFileOptions fills the defaults of every optional field. */
function resolveTokenFileOptions(options: TokenFileOptions): Required<TokenFileOptions> {
  return { path: options.path, maxAgeMs: options.maxAgeMs ?? 60_000, checkIntervalMs: options.checkIntervalMs ?? 1_000, clock: options.clock ?? realClock };
}

/**
 * TokenFile hands out the bearer token in a file that the kubelet rewrites
 * as it rotates the pod's bound service-account token, so the attacher keeps
 * authenticating across rotations without a restart. Like client-go's
 * cachingTokenSource it re-reads the file at least once a minute; it also
 * notices a rotation sooner by the file's identity (inode, size, mtime:
 * the kubelet swaps a symlink, which changes all three), checked at most
 * once a second so the hot path costs a clock read.
 */
export class TokenFile {
  private readonly options: Required<TokenFileOptions>;
  private cached: string;
  private stamp: FileStamp;
  private readAt: number;
  private checkedAt: number;

  constructor(options: TokenFileOptions) {
    this.options = resolveTokenFileOptions(options);
    this.stamp = this.stat();
    this.cached = this.read();
    this.readAt = this.checkedAt = this.options.clock.now();
  }

  /**
   * token returns the current token. A file that cannot be read after
   * start-up (mid-rotation) leaves the last good token in use; the next
   * check tries again.
   */
  token(): string {
    const now = this.options.clock.now();
    // A clock stepped back makes an age negative: that is a due check and a
    // due re-read, not a token young for as long as the step.
    const fresh = within(now - this.readAt, this.options.maxAgeMs);
    if (fresh && within(now - this.checkedAt, this.options.checkIntervalMs)) return this.cached;
    this.checkedAt = now;
    let stamp: FileStamp;
    try {
      stamp = this.stat();
      if (fresh && sameStamp(stamp, this.stamp)) return this.cached;
      const token = this.read();
      if (token === "") return this.cached;
      this.cached = token;
    } catch (e: unknown) {
      // The kubelet swaps the file atomically, so a failure here is a passing
      // state or a broken mount; both are better served by the last token.
      if (e instanceof Error && "code" in e) return this.cached;
      throw e;
    }
    this.stamp = stamp;
    this.readAt = now;
    return this.cached;
  }

  private stat(): FileStamp {
    const { ino, size, mtimeMs } = statSync(this.options.path);
    return { ino, size, mtimeMs };
  }

  private read(): string {
    return readFileSync(this.options.path, "utf8").trim();
  }
}

/** within: an age of `ageMs` is still under `limitMs`, and not negative. */
function within(ageMs: number, limitMs: number): boolean {
  return ageMs >= 0 && ageMs < limitMs;
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}
