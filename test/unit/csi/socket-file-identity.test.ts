import { describe, expect, it } from "bun:test";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { socketFileIdentity } from "../../../src/csi/socket-file-identity";

/** listenOn binds a Unix socket at `path` as a driver does, and answers how to stop listening. */
function listenOn(path: string): () => void {
  const listener = Bun.listen({ unix: path, socket: { data() {} } });
  return () => listener.stop(true);
}

describe("socket file identity", () => {
  it("names a socket bound again on the same path differently, as a restarted driver's, even where the filesystem gives it the same inode number; the same file the same each time, a chmod too", () => {
    const dir = mkdtempSync(join(tmpdir(), "socket-file-identity-"));
    try {
      const path = join(dir, "csi.sock");
      const stopFirst = listenOn(path);
      const first = socketFileIdentity(path);
      expect(first).toMatch(/^\d+:\d+(:\d+)?$/);
      chmodSync(path, 0o600);
      expect(socketFileIdentity(path)).toBe(first);
      // As a driver's crash and restart: the old socket closed, its file unlinked (Bun's stop does that itself), a new one bound.
      stopFirst();
      rmSync(path, { force: true });
      const stopSecond = listenOn(path);
      // ext4 (this machine's /tmp) gives the new file the freed inode number, so there only the birth time tells them apart.
      expect(socketFileIdentity(path)).not.toBe(first);
      stopSecond();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names nothing where no file is, and nothing under a path that cannot be looked through", () => {
    expect(socketFileIdentity("/nonexistent/csi.sock")).toBeUndefined();
    expect(socketFileIdentity("/etc/hostname/csi.sock")).toBeUndefined();
  });
});
