import { describe, expect, it } from "bun:test";
import { flagTable } from "../../../src/cli/flag-table";
import { usage } from "../../../src/cli/usage";

describe("--help", () => {
  it("lists every flag of the table once, sorted by name as Go's flag package does", () => {
    const listed = [...usage().matchAll(/^ {2}-(\S+)/gm)].map((match) => match[1]);
    expect(listed).toEqual(flagTable.map((flag) => flag.name).sort());
  });

  it("shows each flag's value type, help and non-zero default in Go's layout", () => {
    const text = usage();
    expect(text).toContain('  -csi-address string\n    \tAddress of the CSI driver socket. (default "/run/csi/socket")\n');
    expect(text).toContain("  -timeout duration\n    \tTimeout for waiting for attaching or detaching the volume. (default 15s)\n");
    expect(text).toContain("  -worker-threads uint\n    \tNumber of attacher worker threads (default 10)");
    expect(text).toContain("  -leader-election\n    \tEnable leader election.\n");
    expect(text).toContain("  -http-endpoint :8080\n");
  });

  it("lists the known feature gates with their stage and default", () => {
    expect(usage()).toContain(
      "    \tAllAlpha=true|false (ALPHA - default=false)\n    \tAllBeta=true|false (BETA - default=false)\n    \tMutableCSINodeAllocatableCount=true|false (BETA - default=false)\n    \tReleaseLeaderElectionOnExit=true|false (ALPHA - default=false)\n",
    );
  });

  it("says --automaxprocs has no effect under Bun", () => {
    expect(usage()).toContain("no effect under Bun");
  });
});
