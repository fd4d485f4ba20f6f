import { describe, expect, it } from "bun:test";
import { PersistentVolumeFinalizerWriter } from "../../../src/controller/pv-finalizer-writer";
import type { JsonPatchOperation } from "../../../src/kube/finalizer-patches";
import { KubeApiError } from "../../../src/kube/errors";
import { parsePersistentVolume, type PersistentVolume } from "../../../src/kube/objects/persistent-volume";

const driverName = "unit.csi.test";
const ours = "external-attacher/unit-csi-test";

function pv(finalizers?: string[]): PersistentVolume {
  return parsePersistentVolume({ metadata: { name: "pv1", resourceVersion: "3", ...(finalizers ? { finalizers } : {}) }, spec: { csi: { driver: driverName, volumeHandle: "vol-1" } } });
}

/** A writer over an API that records each patch and answers with `answer`, or fails with `failure`. */
function recordingWriter(answer: PersistentVolume, failure?: Error) {
  const patches: { name: string; operations: readonly JsonPatchOperation[] }[] = [];
  const api = {
    async patchPersistentVolume(name: string, operations: readonly JsonPatchOperation[]) {
      patches.push({ name, operations });
      if (failure) throw failure;
      return answer;
    },
  };
  return { writer: new PersistentVolumeFinalizerWriter({ api, driverName }), patches };
}

describe("PV finalizer writer", () => {
  it("adds our finalizer with a patch that cannot clobber others, and goes on with the server's PV", async () => {
    const written = pv(["kubernetes.io/pv-protection", ours]);
    const { writer, patches } = recordingWriter(written);
    const result = await writer.ensureFinalizer(pv(["kubernetes.io/pv-protection"]));
    expect({ result, patches }).toEqual({ result: written, patches: [{ name: "pv1", operations: [{ op: "add", path: "/metadata/finalizers/-", value: ours }] }] });
  });

  it("sends nothing to add a finalizer the PV already carries", async () => {
    const current = pv([ours]);
    const { writer, patches } = recordingWriter(current);
    expect({ result: await writer.ensureFinalizer(current), patches }).toEqual({ result: current, patches: [] });
  });

  it("names the failed step when adding the finalizer fails, keeping the API's error as the cause", async () => {
    const conflict = new KubeApiError(422, "Invalid", "the server rejected our request");
    const { writer } = recordingWriter(pv(), conflict);
    const failed = await writer.ensureFinalizer(pv()).catch((e: unknown) => e);
    expect(failed instanceof Error ? { message: failed.message, cause: failed.cause } : failed).toEqual({
      message: "could not add PersistentVolume finalizer: the server rejected our request",
      cause: conflict,
    });
  });

  it("removes exactly our finalizer, testing its index first", async () => {
    const { writer, patches } = recordingWriter(pv(["a"]));
    const sent = await writer.removeFinalizer(pv(["a", ours, "b"]));
    expect({ sent, patches }).toEqual({
      sent: true,
      patches: [{ name: "pv1", operations: [{ op: "test", path: "/metadata/finalizers/1", value: ours }, { op: "remove", path: "/metadata/finalizers/1" }] }],
    });
  });

  it("sends nothing to remove a finalizer the PV does not carry", async () => {
    const { writer, patches } = recordingWriter(pv());
    expect({ sent: await writer.removeFinalizer(pv(["kubernetes.io/pv-protection"])), patches }).toEqual({ sent: false, patches: [] });
  });
});
