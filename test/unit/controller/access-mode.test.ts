import { describe, expect, it } from "bun:test";
import { VolumeCapability_AccessMode_Mode as Mode } from "../../../gen/csi/v1/csi_pb";
import { toCsiAccessMode } from "../../../src/controller/volume-capability";

describe("access modes", () => {
  const cases: [string[], Mode | string, Mode | string][] = [
    [["ReadWriteOncePod"], Mode.SINGLE_NODE_WRITER, Mode.SINGLE_NODE_SINGLE_WRITER],
    [["ReadWriteOncePod", "ReadWriteOncePod"], Mode.SINGLE_NODE_WRITER, Mode.SINGLE_NODE_SINGLE_WRITER],
    [["ReadWriteOncePod", "ReadWriteOnce"], "ReadWriteOncePod with other access modes", "ReadWriteOncePod with other access modes"],
    [["ReadWriteMany", "ReadOnlyMany"], Mode.MULTI_NODE_MULTI_WRITER, Mode.MULTI_NODE_MULTI_WRITER],
    [["ReadOnlyMany", "ReadWriteOnce"], "ReadOnlyMany and ReadWriteOnce", "ReadOnlyMany and ReadWriteOnce"],
    [["ReadOnlyMany"], Mode.MULTI_NODE_READER_ONLY, Mode.MULTI_NODE_READER_ONLY],
    [["ReadWriteOnce"], Mode.SINGLE_NODE_WRITER, Mode.SINGLE_NODE_MULTI_WRITER],
    [[], "unsupported AccessMode combination: []", "unsupported AccessMode combination: []"],
  ];

  for (const [modes, without, withMultiWriter] of cases) {
    it(`maps [${modes.join(" ")}] as the spec's table says, with and without SINGLE_NODE_MULTI_WRITER`, () => {
      for (const [capable, expected] of [[false, without], [true, withMultiWriter]] as const) {
        if (typeof expected === "string") expect(() => toCsiAccessMode(modes, capable)).toThrow(expected);
        else expect(toCsiAccessMode(modes, capable)).toBe(expected);
      }
    });
  }
});
