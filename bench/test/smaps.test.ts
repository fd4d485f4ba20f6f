import { describe, expect, it } from "bun:test";
import { parseSmaps } from "../lib/smaps";

/** Four mappings as Linux writes them: two of the executable, one library, the brk heap; fields trimmed to those read and a few around them. */
const smaps = `00400000-00800000 r-xp 00000000 08:01 1234                               /app/csi-attacher
Size:               4096 kB
Rss:                2048 kB
Pss:                2048 kB
Anonymous:             0 kB
00800000-00900000 rw-p 00400000 08:01 1234                               /app/csi-attacher
Size:               1024 kB
Rss:                 512 kB
Anonymous:           384 kB
7f0000000000-7f0000100000 r-xp 00000000 08:01 99                         /usr/lib/x86_64-linux-gnu/libc.so.6
Rss:                 300 kB
Anonymous:             0 kB
01000000-02000000 rw-p 00000000 00:00 0                                  [heap]
Rss:                1000 kB
Anonymous:          1000 kB
7f1000000000-7f1000400000 rw-p 00000000 00:00 0 
Rss:                2000 kB
Anonymous:          2000 kB
`;

describe("parseSmaps", () => {
  it("splits resident pages into the executable's file pages by segment, other files' and anonymous ones", () => {
    expect(parseSmaps(smaps, "/app/csi-attacher")).toEqual({
      executableBytes: { "r-xp": 2048 * 1024, "rw-p": 128 * 1024 },
      otherFileBytes: 300 * 1024,
      anonBytes: (384 + 1000 + 2000) * 1024,
      brkHeapBytes: 1000 * 1024,
    });
  });
});
