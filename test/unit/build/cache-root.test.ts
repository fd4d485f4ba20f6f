import { describe, expect, it } from "bun:test";
import { homedir } from "node:os";
import { join } from "node:path";
import { cacheRoot } from "../../../scripts/build/cache-root";

describe("cache root", () => {
  it("takes BUN_CSI_ATTACHER_CACHE first, then XDG_CACHE_HOME, then ~/.cache, as the shell scripts do", () => {
    expect([
      cacheRoot({ BUN_CSI_ATTACHER_CACHE: "/ci/cache", XDG_CACHE_HOME: "/xdg" }),
      cacheRoot({ XDG_CACHE_HOME: "/xdg" }),
      cacheRoot({}),
    ]).toEqual(["/ci/cache", "/xdg/bun-csi-attacher", join(homedir(), ".cache", "bun-csi-attacher")]);
  });

  it("counts an empty variable as unset, as the shell's :- does", () => {
    expect(cacheRoot({ BUN_CSI_ATTACHER_CACHE: "", XDG_CACHE_HOME: "" })).toBe(join(homedir(), ".cache", "bun-csi-attacher"));
  });
});
