import { describe, expect, it } from "bun:test";
import { HpackDecoder, HpackDecodingError } from "../../../src/http2/hpack-decoder";
import { encodeHeaderBlock } from "../../../src/http2/hpack-encoder";

function bytes(hex: string): Buffer {
  return Buffer.from(hex.replace(/\s/g, ""), "hex");
}

const date21 = "Mon, 21 Oct 2013 20:13:21 GMT";

describe("HPACK decoding", () => {
  // RFC 7541, Appendix C.3: three requests on one connection, no Huffman; each refers to the dynamic table the earlier ones built.
  it("decodes the RFC's requests without Huffman coding, keeping the dynamic table between blocks", () => {
    const decoder = new HpackDecoder(4096);
    expect(decoder.decode(bytes("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"))).toEqual([
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/"],
      [":authority", "www.example.com"],
    ]);
    expect(decoder.decode(bytes("8286 84be 5808 6e6f 2d63 6163 6865"))).toEqual([
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/"],
      [":authority", "www.example.com"],
      ["cache-control", "no-cache"],
    ]);
    expect(decoder.decode(bytes("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"))).toEqual([
      [":method", "GET"],
      [":scheme", "https"],
      [":path", "/index.html"],
      [":authority", "www.example.com"],
      ["custom-key", "custom-value"],
    ]);
  });

  // Appendix C.4: the same requests with Huffman-coded strings.
  it("decodes the RFC's requests with Huffman coding", () => {
    const decoder = new HpackDecoder(4096);
    expect(decoder.decode(bytes("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"))).toContainEqual([":authority", "www.example.com"]);
    expect(decoder.decode(bytes("8286 84be 5886 a8eb 1064 9cbf"))).toContainEqual(["cache-control", "no-cache"]);
    expect(decoder.decode(bytes("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"))).toEqual([
      [":method", "GET"],
      [":scheme", "https"],
      [":path", "/index.html"],
      [":authority", "www.example.com"],
      ["custom-key", "custom-value"],
    ]);
  });

  // Appendix C.5: responses with a 256-octet table, so that the second evicts the first's oldest entry.
  it("evicts the oldest entries when the table is full, as the RFC's responses do", () => {
    const decoder = new HpackDecoder(256);
    decoder.decode(
      bytes(
        "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
      ),
    );
    // 307 joins the table and pushes ":status: 302" out; c1 c0 bf then name the three older entries.
    expect(decoder.decode(bytes("4803 3330 37c1 c0bf"))).toEqual([
      [":status", "307"],
      ["cache-control", "private"],
      ["date", date21],
      ["location", "https://www.example.com"],
    ]);
    // Index 65 would have been ":status: 302" without the eviction; the table now holds only four entries (62-65).
    expect(() => decoder.decode(bytes("c2"))).toThrow(HpackDecodingError);
  });

  it("applies a dynamic table size update at the start of a block, and refuses one above what was announced", () => {
    const decoder = new HpackDecoder(4096);
    decoder.decode(bytes("4803 3330 32"));
    // 0x20: size 0 empties the table, so index 62 names nothing.
    expect(() => decoder.decode(bytes("20be"))).toThrow(HpackDecodingError);
    // 0x3f e1 1f: size 4096 (31 + 4065), allowed; 4097 (0x3f e2 1f) is not.
    expect(decoder.decode(bytes("3fe11f 88"))).toEqual([[":status", "200"]]);
    expect(() => new HpackDecoder(4096).decode(bytes("3fe21f"))).toThrow(HpackDecodingError);
  });

  it("refuses a size update after a field, index 0, and a block cut inside a string", () => {
    expect(() => new HpackDecoder(4096).decode(bytes("8820"))).toThrow(HpackDecodingError);
    expect(() => new HpackDecoder(4096).decode(bytes("80"))).toThrow(HpackDecodingError);
    expect(() => new HpackDecoder(4096).decode(bytes("400a 6375 73"))).toThrow(HpackDecodingError);
  });
});

describe("HPACK encoding of a request's headers", () => {
  it("encodes what the decoder reads back, whole static fields by index, names by index, the rest as literals", () => {
    const fields = [
      [":method", "POST"],
      [":scheme", "http"],
      [":authority", "localhost"],
      [":path", "/csi.v1.Controller/ControllerPublishVolume"],
      ["content-type", "application/grpc"],
      ["te", "trailers"],
      ["grpc-timeout", "15000m"],
      ["x-long", "v".repeat(300)],
    ] as const;
    const block = encodeHeaderBlock(fields);
    expect(new HpackDecoder(4096).decode(block)).toEqual(fields.map(([n, v]) => [n, v]));
    // :method POST is static entry 3, :scheme http entry 6: one octet each.
    expect([...block.subarray(0, 2)]).toEqual([0x83, 0x86]);
  });

  it("writes each character as its one octet (latin1), and a credential of thousands of octets whole", () => {
    const fields = [
      ["x-latin1", "caf\u00e9"],
      ["authorization", `Bearer ${"t".repeat(3000)}`],
    ] as const;
    const block = encodeHeaderBlock(fields);
    expect(new HpackDecoder(4096).decode(block)).toEqual(fields.map(([n, v]) => [n, v]));
    expect(block.includes(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBe(true);
  });

  it("never adds to the peer's dynamic table: decoding the block twice gives the same fields", () => {
    const decoder = new HpackDecoder(4096);
    const block = encodeHeaderBlock([["grpc-timeout", "5S"]]);
    expect(decoder.decode(block)).toEqual(decoder.decode(block));
    expect(() => decoder.decode(bytes("be"))).toThrow(HpackDecodingError);
  });
});
