import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TokenFile } from "../../../src/kube/token-file";
import { FakeClock } from "../queue/fake-clock";

const fixedMtime = 1_700_000_000;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tokenFileAt(first: string) {
  const dir = mkdtempSync(join(tmpdir(), "token-file-"));
  dirs.push(dir);
  const path = join(dir, "token");
  writeFileSync(path, `${first}\n`);
  // Whole seconds, so that a test can give a rewritten file the same mtime exactly.
  utimesSync(path, fixedMtime, fixedMtime);
  const clock = new FakeClock(0);
  const file = new TokenFile({ path, maxAgeMs: 60_000, checkIntervalMs: 1_000, clock });
  return { path, file, advance: (ms: number) => clock.step(ms) };
}

/** Rotates the token the way the kubelet does: a new file swapped into place. */
function rotate(path: string, token: string): void {
  writeFileSync(`${path}.new`, `${token}\n`);
  renameSync(`${path}.new`, path);
}

/** Rewrites the token in place with the same inode, size and mtime: only a re-read by age can find it. */
function rewriteUnseen(path: string, token: string): void {
  const inode = statSync(path).ino;
  writeFileSync(path, `${token}\n`);
  utimesSync(path, fixedMtime, fixedMtime);
  expect(statSync(path).ino).toBe(inode);
}

describe("service-account token file", () => {
  it("reads the token once and serves it from memory within the check interval", () => {
    const { path, file, advance } = tokenFileAt("token-1");
    rotate(path, "token-2");
    advance(999);
    expect(file.token()).toBe("token-1");
  });

  it("picks up a rotated token at the next check", () => {
    const { path, file, advance } = tokenFileAt("token-1");
    rotate(path, "token-2");
    advance(1_000);
    expect(file.token()).toBe("token-2");
  });

  it("re-reads after a minute even when the file looks unchanged, as client-go does", () => {
    const { path, file, advance } = tokenFileAt("token-1");
    rewriteUnseen(path, "token-X");
    advance(1_000);
    expect(file.token()).toBe("token-1");
    advance(59_000);
    expect(file.token()).toBe("token-X");
  });

  it("checks at once, and re-reads, when the clock was stepped back, rather than keep the token for the step's length", () => {
    const { path, file, advance } = tokenFileAt("token-1");
    rewriteUnseen(path, "token-X");
    advance(-3_600_000);
    expect(file.token()).toBe("token-X");
  });

  it("keeps the last token while the file is missing mid-rotation", () => {
    const { path, file, advance } = tokenFileAt("token-1");
    rmSync(path);
    advance(1_000);
    expect(file.token()).toBe("token-1");
    rotate(path, "token-2");
    advance(1_000);
    expect(file.token()).toBe("token-2");
  });

  it("fails at start-up when there is no token file", () => {
    expect(() => new TokenFile({ path: "/nonexistent/token" })).toThrow("ENOENT");
  });
});
