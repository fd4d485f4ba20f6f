import { describe, expect, it } from "bun:test";
import { attachmentKey, NodeVolumesLog } from "../lib/node-volumes-log";

const node = (name: string, ...volumes: string[]) => ({ metadata: { name }, status: { volumesAttached: volumes.map((v) => ({ name: v, devicePath: "" })) } });

describe("the pods scenario's log of node.status.volumesAttached", () => {
  it("records when a volume first appears on a node and when it first leaves, per node", () => {
    const log = new NodeVolumesLog();
    log.record([node("a"), node("b")], 0);
    log.record([node("a", "v1"), node("b", "v1")], 10);
    log.record([node("a", "v1"), node("b")], 20);
    log.record([node("a"), node("b")], 30);
    expect({ appeared: Object.fromEntries(log.appearedAt), left: Object.fromEntries(log.leftAt) }).toEqual({
      appeared: { [attachmentKey("a", "v1")]: 10, [attachmentKey("b", "v1")]: 10 },
      left: { [attachmentKey("b", "v1")]: 20, [attachmentKey("a", "v1")]: 30 },
    });
  });

  it("does not count a volume listed before forget() as appearing after it", () => {
    const log = new NodeVolumesLog();
    log.record([node("a", "old")], 0);
    log.forget();
    log.record([node("a", "old", "new"), { metadata: { name: "b" } }], 5);
    expect({ appeared: [...log.appearedAt.keys()], listed: [log.isListed(attachmentKey("a", "old")), log.isListed(attachmentKey("b", "old"))] }).toEqual({
      appeared: [attachmentKey("a", "new")],
      listed: [true, false],
    });
  });
});
