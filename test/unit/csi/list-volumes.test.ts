import { describe, expect, it } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import { Controller, ListVolumesResponseSchema, type ListVolumesResponse } from "../../../gen/csi/v1/csi_pb";
import { CsiClient } from "../../../src/csi/csi-client";

/** clientAnswering serves ListVolumes by handing each starting token to `page`. */
function clientAnswering(page: (startingToken: string) => ListVolumesResponse): CsiClient {
  const transport = createRouterTransport(({ service }) => {
    service(Controller, { listVolumes: (request) => page(request.startingToken) });
  });
  return new CsiClient(transport);
}

describe("listVolumes", () => {
  it("follows next_token to the last page and maps each volume to its published nodes, a missing status to none", async () => {
    const pages: Record<string, ListVolumesResponse> = {
      "": create(ListVolumesResponseSchema, {
        entries: [
          { volume: { volumeId: "vol-1" }, status: { publishedNodeIds: ["id-a", "id-b"] } },
          { volume: { volumeId: "vol-2" } },
        ],
        nextToken: "t1",
      }),
      t1: create(ListVolumesResponseSchema, { entries: [{ volume: { volumeId: "vol-3" }, status: { publishedNodeIds: ["id-c"] } }] }),
    };
    const client = clientAnswering((token) => pages[token] ?? create(ListVolumesResponseSchema));
    expect(Object.fromEntries(await client.listVolumes(2, 5_000))).toEqual({ "vol-1": ["id-a", "id-b"], "vol-2": [], "vol-3": ["id-c"] });
  });

  it("hands each page's volumes over before it asks for the next page, so a pass holds one page", async () => {
    const events: string[] = [];
    const client = clientAnswering((token) => {
      events.push(`page ${token === "" ? "first" : token}`);
      return create(ListVolumesResponseSchema, { entries: [{ volume: { volumeId: `vol-${token || "0"}` } }], nextToken: token === "" ? "t1" : "" });
    });
    await client.forEachPublishedVolume(1, 5_000, (volumeId) => events.push(volumeId));
    expect(events).toEqual(["page first", "vol-0", "page t1", "vol-t1"]);
  });

  it("gives up with Go's deadline words when the pages together outlast the timeout", async () => {
    // A driver that never stops handing out tokens.
    const client = clientAnswering(() => create(ListVolumesResponseSchema, { nextToken: "again" }));
    await expect(client.listVolumes(1, 50)).rejects.toThrow("rpc error: code = DeadlineExceeded desc = context deadline exceeded");
  });
});
