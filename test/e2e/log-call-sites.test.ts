import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { Glob } from "bun";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

/**
 * The compiled binary's klog headers name the file and line of the call
 * that logged, as upstream's do. The build writes each call's site into the
 * binary (scripts/build/log-call-sites.ts); this reads the source at every
 * site the binary printed in an attach, a failed and a retried detach.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const node = "call-site-node";
const srcDir = join(import.meta.dir, "../../src");

/** Every source file of the attacher, by base name (errors.ts is two). */
const sourcesByName = new Map<string, string[][]>();
for (const path of new Glob("**/*.ts").scanSync(srcDir)) {
  const lines = readFileSync(join(srcDir, path), "utf8").split("\n");
  sourcesByName.set(basename(path), [...(sourcesByName.get(basename(path)) ?? []), lines]);
}

/** A klog text header and its quoted message: `I1129 14:32:00.499154   29161 logging.ts:19] "Version"`. */
const header = /^[IWE]\d{4} [\d:.]+\s+\d+ (\S+):(\d+)\] ("(?:[^"\\]|\\.)*")/;
const loggerCall = /\.(info|warn|error)\(/;

/** namesItsCall says whether line `line` of some file called `file` holds a logger call, with the message among its next lines when the file writes it as a literal. */
function namesItsCall(file: string, line: number, quotedMessage: string): boolean {
  return (sourcesByName.get(file) ?? []).some((lines) => {
    if (!loggerCall.test(lines[line - 1] ?? "")) return false;
    const literalAnywhere = lines.some((text) => text.includes(quotedMessage));
    return !literalAnywhere || lines.slice(line - 1, line + 4).some((text) => text.includes(quotedMessage));
  });
}

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, { driverName: "call-site.fake.csi.test", nodes: [node], attacherArgs: ["-v=5"] });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

describe("log call sites in the compiled binary", () => {
  it("names, in every line's header, the source file and line of the logger call that printed it", async () => {
    await admin.create(paths.persistentVolumes, persistentVolume("pv-call-site", { driver: setup.driverName, volumeHandle: "vol-call-site" }));
    await admin.create(paths.volumeAttachments, volumeAttachment("call-site", setup.driverName, node, "pv-call-site"));
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("call-site"), (va) => va?.status?.attached === true);
    await setup.driver.control.script("ControllerUnpublishVolume", [{ code: "Internal", times: 1, volumeId: "vol-call-site" }]);
    await admin.delete(paths.volumeAttachment("call-site"));
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("call-site"), (va) => va === null);
    await setup.attacher.waitForLog(/"Detached"/);

    const sites = setup.attacher
      .log()
      .split("\n")
      .flatMap((text) => {
        const match = header.exec(text);
        return match?.[1] === undefined || match[3] === undefined ? [] : [{ file: match[1], line: Number(match[2]), message: match[3] }];
      });
    const wrong = sites.filter((site) => !namesItsCall(site.file, site.line, site.message));
    expect(wrong).toEqual([]);
    // An attach, a failed detach and its retry print lines from many calls.
    expect(new Set(sites.map((site) => `${site.file}:${site.line}`)).size).toBeGreaterThan(20);
    expect(sites.map((site) => site.message)).toContain('"Attaching"');
    expect(sites.map((site) => site.message)).toContain('"Detached"');
  });
});
