import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

/** What the compiled attacher logs of its gRPC traffic at -v=5: everything but secrets. */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const node = "grpc-log-node";
const secretValue = "pa55-that-must-never-be-logged";
const maxLogLength = 30;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, { driverName: "grpc-log.fake.csi.test", nodes: [node], attacherArgs: ["-v=5", `--max-grpc-log-length=${maxLogLength}`] });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

describe("gRPC logging at -v=5", () => {
  it("logs each publish request with its secrets replaced by ***stripped***, never their values, and caps responses at --max-grpc-log-length", async () => {
    await admin.create(paths.secrets("default"), {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "grpc-log-secret", namespace: "default" },
      data: { password: Buffer.from(secretValue).toString("base64") },
    });
    await admin.create(
      paths.persistentVolumes,
      persistentVolume("pv-grpc-log", { driver: setup.driverName, volumeHandle: "vol-grpc-log", controllerPublishSecretRef: { name: "grpc-log-secret", namespace: "default" } }),
    );
    await admin.create(paths.volumeAttachments, volumeAttachment("grpc-log", setup.driverName, node, "pv-grpc-log"));
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("grpc-log"), (va) => va?.status?.attached === true);
    // The secret did reach the driver: stripping happens in the log only.
    const [publish] = await setup.driver.control.calls("ControllerPublishVolume");
    expect((publish?.request as { secrets?: unknown }).secrets).toEqual({ password: secretValue });

    await setup.attacher.waitForLog(/"GRPC error" err=<nil>/);
    const log = setup.attacher.log();
    expect(log).toMatch(/"GRPC call" method="\/csi\.v1\.Controller\/ControllerPublishVolume"/);
    const request = log.split("\n").find((line) => line.includes('"GRPC request"') && line.includes("vol-grpc-log"));
    expect(request).toContain(String.raw`\"secrets\":\"***stripped***\"`);
    const response = `{"publish_context":{"devicePath":"/dev/fake/vol-grpc-log"}}`;
    const capped = `${response.slice(0, maxLogLength)} [response body too large, log capped to ${maxLogLength} chars]`;
    expect(log).toContain(`"GRPC response" response=${JSON.stringify(capped)}`);
    expect(log).not.toContain(secretValue);
  });
});

describe("--vmodule", () => {
  it("prints the -v lines of the files it names, here csi-handler's and the gRPC interceptor's, and no others, at -v=0", async () => {
    const quiet = await startFakeDriverSetup(cluster, admin, {
      driverName: "vmodule.fake.csi.test",
      nodes: ["vmodule-node"],
      attacherArgs: ["-v=0", "--vmodule=csi-handler=2,grpc-log-interceptor=5"],
    });
    try {
      await admin.create(paths.persistentVolumes, persistentVolume("pv-vmodule", { driver: quiet.driverName, volumeHandle: "vol-vmodule" }));
      await admin.create(paths.volumeAttachments, volumeAttachment("vmodule", quiet.driverName, "vmodule-node", "pv-vmodule"));
      await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("vmodule"), (va) => va?.status?.attached === true);
      await quiet.attacher.waitForLog(/csi-handler\.ts:\d+\] "Attached"/);
      await quiet.attacher.waitForLog(/grpc-log-interceptor\.ts:\d+\] "GRPC call" method="\/csi\.v1\.Controller\/ControllerPublishVolume"/);
      // run-attacher.ts logs the capabilities at -v=2: no rule names it.
      expect(quiet.attacher.log()).not.toContain('"CSI driver capabilities"');
    } finally {
      await stopFakeDriverSetup(quiet);
    }
  });
});
