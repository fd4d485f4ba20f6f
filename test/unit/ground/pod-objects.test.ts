import { describe, expect, it } from "bun:test";
import { attachedVolumeName, attachmentName } from "../../ground/pod-objects";

describe("names the attach/detach controller derives", () => {
  it("names a VolumeAttachment csi- + hex SHA-256 of handle, driver and node, as kube-controller-manager v1.36.3 named these in the e2e run", () => {
    expect([attachmentName("adc-vol-attach", "adc.fake.csi.test", "adc-node-a"), attachmentName("vol-0adc0ebs00000001", "ebs.csi.aws.com", "adc-node-c")]).toEqual([
      "csi-ed8cf6d7e73a20a834ce8f050dd25fb5959cdca6b0407934395cdaf9e40dbc8a",
      "csi-105177ee558b3587666aa8ddff6e3c80fd08358caa1b3974a1205a2ea890a61f",
    ]);
  });

  it("lists a CSI volume in node.status.volumesAttached as kubernetes.io/csi/<driver>^<handle>", () => {
    expect(attachedVolumeName("ebs.csi.aws.com", "vol-1")).toBe("kubernetes.io/csi/ebs.csi.aws.com^vol-1");
  });
});
