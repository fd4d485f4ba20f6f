import { describe, expect, it } from "bun:test";
import { decodeHuffman, HuffmanDecodingError } from "../../../src/http2/hpack-huffman";

function decode(hex: string): string {
  const bytes = Buffer.from(hex.replace(/\s/g, ""), "hex");
  return decodeHuffman(bytes, 0, bytes.length);
}

describe("HPACK's Huffman decoding", () => {
  // RFC 7541, Appendix C.4 and C.6: the strings its examples Huffman-code.
  it.each([
    ["f1e3 c2e5 f23a 6ba0 ab90 f4ff", "www.example.com"],
    ["a8eb 1064 9cbf", "no-cache"],
    ["25a8 49e9 5ba9 7d7f", "custom-key"],
    ["25a8 49e9 5bb8 e8b4 bf", "custom-value"],
    ["6402", "302"],
    ["aec3 771a 4b", "private"],
    ["d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff", "Mon, 21 Oct 2013 20:13:21 GMT"],
    ["9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3", "https://www.example.com"],
  ])("decodes the RFC's example %s as %p", (hex, text) => {
    expect(decode(hex)).toBe(text);
  });

  it("decodes an empty string from no octets", () => {
    expect(decode("")).toBe("");
  });

  it("decodes a symbol with a 30-bit code", () => {
    // '\n' (10) has a 30-bit code: 0x3ffffffc; then 7 bits of padding would overrun, so 2 ones pad it to 32 bits.
    expect(decode("ffff fff3")).toBe("\n");
  });

  it("decodes a string longer than any before it whole, and a shorter one after it without the longer one's rest", () => {
    // "0" is 00000: 1,000 of them are 5,000 bits, 625 octets with no padding.
    expect(decode("00".repeat(625))).toBe("0".repeat(1000));
    expect(decode("6402")).toBe("302");
  });

  it("refuses padding longer than 7 bits", () => {
    // "0" is 00000 (5 bits); a whole octet of ones after it is 11 bits of padding.
    expect(() => decode("07ff")).toThrow(HuffmanDecodingError);
  });

  it("refuses padding that is not all ones", () => {
    // "0" then 3 bits 000: a code prefix, not EOS's.
    expect(() => decode("00")).toThrow(HuffmanDecodingError);
  });

  it("refuses the end-of-string symbol inside a string", () => {
    // EOS is 30 ones; two more ones pad it to 32 bits.
    expect(() => decode("ffff ffff")).toThrow(HuffmanDecodingError);
  });
});
