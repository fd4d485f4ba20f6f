import { describe, expect, it } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import { Controller, ListVolumesResponseSchema, type ListVolumesResponse } from "../../../gen/csi/v1/csi_pb";
import { CsiClient } from "../../../src/csi/csi-client";

/** clientAnswering serves ListVolumes by handing each starting token to `page`. */
function clientAnswering(page: (startingToken: string) => ListVolumesResponse | Promise<ListVolumesResponse>): CsiClient {
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

  it("gives each page its own timeout, so a listing whose pages together outlast one timeout completes", async () => {
    const client = clientAnswering(async (token) => {
      await Bun.sleep(60);
      const next = { "": "t1", t1: "t2", t2: "" }[token] ?? "";
      return create(ListVolumesResponseSchema, { entries: [{ volume: { volumeId: `vol-${token || "0"}` } }], nextToken: next });
    });
    // Three pages of 60 ms each under a 150 ms timeout: 180 ms in all.
    expect([...(await client.listVolumes(1, 150)).keys()]).toEqual(["vol-0", "vol-t1", "vol-t2"]);
  });

  it("fails with Go's deadline words when one page outlasts the timeout", async () => {
    const client = clientAnswering(async (token) => {
      if (token === "t1") await Bun.sleep(500);
      return create(ListVolumesResponseSchema, { entries: [], nextToken: token === "" ? "t1" : "" });
    });
    await expect(client.listVolumes(1, 50)).rejects.toThrow("rpc error: code = DeadlineExceeded desc = context deadline exceeded");
  });

  it("gives up on a driver that answers a page with the token it was given, which would never end the listing", async () => {
    const client = clientAnswering(() => create(ListVolumesResponseSchema, { nextToken: "again" }));
    await expect(client.listVolumes(1, 5_000)).rejects.toThrow('ListVolumes answered starting_token "again" with the same next_token: the listing would never end');
  });
});
