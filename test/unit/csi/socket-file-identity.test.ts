import { describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { socketFileIdentity } from "../../../src/csi/socket-file-identity";

/** listenOn binds a Unix socket at `path` as a driver does, and answers how to stop listening. */
function listenOn(path: string): () => void {
  const listener = Bun.listen({ unix: path, socket: { data() {} } });
  return () => listener.stop(true);
}

describe("socket file identity", () => {
  it("names a socket bound again on the same path differently, as a restarted driver's, and the same file the same each time", () => {
    const dir = mkdtempSync(join(tmpdir(), "socket-file-identity-"));
    try {
      const path = join(dir, "csi.sock");
      const stopFirst = listenOn(path);
      const first = socketFileIdentity(path);
      expect(first).toMatch(/^\d+:\d+$/);
      expect(socketFileIdentity(path)).toBe(first);
      unlinkSync(path);
      const stopSecond = listenOn(path);
      expect(socketFileIdentity(path)).not.toBe(first);
      stopFirst();
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
