import { describe, expect, it } from "bun:test";
import {
  locateMemoryCgroup,
  memoryLimitFields,
  memoryLimitOf,
  parseHierarchicalLimit,
  parseLimitBytes,
  parseMountinfo,
  parseProcCgroup,
  readOwnMemoryLimit,
  type ReadFile,
} from "../../../src/util/cgroup-memory-limit";

const v1Mountinfo = [
  "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu",
  "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory",
  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
].join("\n");
const v1ProcCgroup = ["9:name=systemd:/", "4:memory:/kubepods/pod1/abc", "1:cpu:/", "0::/"].join("\n");
const v2Mountinfo = "25 20 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot";

const files = (entries: Record<string, string>): ReadFile => (path) => entries[path];

describe("cgroup memory limit", () => {
  it("reads the mount root, mount point, type and controllers of each mountinfo line, unescaping paths", () => {
    const text = `${v1Mountinfo}\n50 31 0:40 /a\\040b /mnt/x\\040y rw - ext4 /dev/sda1 rw\nnot a mount line`;
    expect(parseMountinfo(text).map((m) => [m.root, m.mountPoint, m.fsType, m.superOptions.join(",")])).toEqual([
      ["/", "/sys/fs/cgroup", "tmpfs", "rw,mode=755"],
      ["/", "/sys/fs/cgroup/cpu", "cgroup", "rw,cpu"],
      ["/", "/sys/fs/cgroup/memory", "cgroup", "rw,memory"],
      ["/", "/sys/fs/cgroup/unified", "cgroup2", "rw"],
      ["/a b", "/mnt/x y", "ext4", "rw"],
    ]);
  });

  it("takes the v1 memory line and the v2 line from /proc/self/cgroup", () => {
    expect([parseProcCgroup(v1ProcCgroup), parseProcCgroup("0::/system.slice/attacher.service\n"), parseProcCgroup("5:cpuacct,memory:/docker/x")]).toEqual([
      { v1Memory: "/kubepods/pod1/abc", v2: "/" },
      { v2: "/system.slice/attacher.service" },
      { v1Memory: "/docker/x" },
    ]);
  });

  it("places the memory controller on v1 when a v1 hierarchy carries it, else on v2", () => {
    expect([
      locateMemoryCgroup(parseProcCgroup(v1ProcCgroup), parseMountinfo(v1Mountinfo)),
      locateMemoryCgroup(parseProcCgroup("0::/kubepods/pod1/abc"), parseMountinfo(v2Mountinfo)),
      locateMemoryCgroup(parseProcCgroup("0::/"), parseMountinfo(v2Mountinfo)),
      locateMemoryCgroup(parseProcCgroup("0::/"), parseMountinfo("31 23 0:28 / /proc rw - proc proc rw")),
    ]).toEqual([
      { version: 1, dir: "/sys/fs/cgroup/memory/kubepods/pod1/abc", mountPoint: "/sys/fs/cgroup/memory" },
      { version: 2, dir: "/sys/fs/cgroup/kubepods/pod1/abc", mountPoint: "/sys/fs/cgroup" },
      { version: 2, dir: "/sys/fs/cgroup", mountPoint: "/sys/fs/cgroup" },
      undefined,
    ]);
  });

  it("cuts the mounted subtree off the path when a container sees only its own subtree without a cgroup namespace", () => {
    const mounts = parseMountinfo("35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory");
    expect([
      locateMemoryCgroup({ v1Memory: "/docker/abc" }, mounts)?.dir,
      locateMemoryCgroup({ v1Memory: "/docker/abc/sub" }, mounts)?.dir,
      locateMemoryCgroup({ v1Memory: "/elsewhere" }, mounts)?.dir,
    ]).toEqual(["/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/sub", "/sys/fs/cgroup/memory"]);
  });

  it("reads a byte count as the limit, and max or v1's near-2^63 value as no limit", () => {
    expect([parseLimitBytes("134217728\n"), parseLimitBytes("max\n"), parseLimitBytes("9223372036854771712\n"), parseLimitBytes("garbage"), parseLimitBytes("")]).toEqual([
      134217728,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect([parseHierarchicalLimit("cache 1\nhierarchical_memory_limit 67108864\nhierarchical_memsw_limit 9223372036854771712\n"), parseHierarchicalLimit("cache 1\n")]).toEqual([67108864, undefined]);
  });

  it("binds a v1 group by the smaller of its own limit and its ancestors' (memory.stat)", () => {
    const cgroup = { version: 1, dir: "/cg/memory/pod/c", mountPoint: "/cg/memory" } as const;
    const own = files({ "/cg/memory/pod/c/memory.limit_in_bytes": "100663296\n", "/cg/memory/pod/c/memory.stat": "hierarchical_memory_limit 100663296\n" });
    const pod = files({ "/cg/memory/pod/c/memory.limit_in_bytes": "9223372036854771712\n", "/cg/memory/pod/c/memory.stat": "hierarchical_memory_limit 67108864\n" });
    const none = files({ "/cg/memory/pod/c/memory.limit_in_bytes": "9223372036854771712\n", "/cg/memory/pod/c/memory.stat": "hierarchical_memory_limit 9223372036854771712\n" });
    expect([memoryLimitOf(cgroup, own), memoryLimitOf(cgroup, pod).limitBytes, memoryLimitOf(cgroup, none).limitBytes]).toEqual([
      { cgroup, limitBytes: 100663296 },
      67108864,
      undefined,
    ]);
  });

  it("binds a v2 group by the smallest memory.max from its directory up to the mount", () => {
    const cgroup = { version: 2, dir: "/cg/kubepods/pod/c", mountPoint: "/cg" } as const;
    const read = files({ "/cg/kubepods/pod/c/memory.max": "max\n", "/cg/kubepods/pod/memory.max": "83886080\n", "/cg/kubepods/memory.max": "1073741824\n" });
    expect([memoryLimitOf(cgroup, read), memoryLimitOf(cgroup, files({ "/cg/kubepods/pod/c/memory.max": "max\n" })).limitBytes]).toEqual([
      { cgroup, limitBytes: 83886080 },
      undefined,
    ]);
  });

  it("finds nothing where /proc/self/cgroup cannot be read", () => {
    expect(readOwnMemoryLimit(files({}))).toBeUndefined();
  });
});

describe("memory limit log fields", () => {
  it("names the cgroup, its limit and the runtime arguments, or says none was found", () => {
    const cgroup = { version: 1, dir: "/sys/fs/cgroup/memory/pod", mountPoint: "/sys/fs/cgroup/memory" } as const;
    expect([
      memoryLimitFields({ cgroup, limitBytes: 100663296 }, ["--smol"]),
      memoryLimitFields({ cgroup, limitBytes: undefined }, []),
      memoryLimitFields(undefined, []),
    ]).toEqual([
      { limit: 100663296, cgroup: "/sys/fs/cgroup/memory/pod", cgroupVersion: 1, execArgv: "--smol" },
      { limit: "none", cgroup: "/sys/fs/cgroup/memory/pod", cgroupVersion: 1, execArgv: "" },
      { limit: "none", cgroup: "not found", execArgv: "" },
    ]);
  });
});
