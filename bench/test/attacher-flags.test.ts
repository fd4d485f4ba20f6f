import { describe, expect, it } from "bun:test";
import { honouredFlags } from "../lib/attacher-flags";
import { usage } from "../../src/cli/usage";

describe("the flags an attacher's --help says it honours", () => {
  it("lists the rate-limit flags of our --help, and leaves out --automaxprocs, whose help says it has no effect", () => {
    const flags = honouredFlags(usage());
    expect([flags.has("kube-api-qps"), flags.has("kube-api-burst"), flags.has("timeout"), flags.has("automaxprocs")]).toEqual([true, true, true, false]);
  });

  it("reads a short flag's help on its own line and a long flag's on the next, as Go's flag.PrintDefaults prints them", () => {
    const help = ["Usage of x:", "  -v\tignored here (no effect)", "  -kube-api-qps float", "    \tQPS to use. (default 5)", "  -old", "    \tkept for old command lines;", "    \tno effect"].join("\n");
    expect([...honouredFlags(help)]).toEqual(["kube-api-qps"]);
  });
});
