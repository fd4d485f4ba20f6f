import { describe, expect, it } from "bun:test";
import { mkdtempSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TokenFile } from "../../../src/kube/token-file";

const fixedMtime = 1_700_000_000;

function tokenFileAt(first: string) {
  const path = join(mkdtempSync(join(tmpdir(), "token-file-")), "token");
  writeFileSync(path, `${first}\n`);
  // Whole seconds, so that a test can give a rewritten file the same mtime exactly.
  utimesSync(path, fixedMtime, fixedMtime);
  let time = 0;
  const file = new TokenFile({ path, maxAgeMs: 60_000, checkIntervalMs: 1_000, now: () => time });
  return { path, file, advance: (ms: number) => void (time += ms) };
}

/** Rotates the token the way the kubelet does: a new file swapped into place. */
function rotate(path: string, token: string): void {
  writeFileSync(`${path}.new`, `${token}\n`);
  renameSync(`${path}.new`, path);
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
    const inode = statSync(path).ino;
    // Same inode, same size, same mtime: only the age can tell.
    writeFileSync(path, "token-X\n");
    utimesSync(path, fixedMtime, fixedMtime);
    expect(statSync(path).ino).toBe(inode);
    advance(1_000);
    expect(file.token()).toBe("token-1");
    advance(59_000);
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
