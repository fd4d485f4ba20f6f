/**
 * HPACK's Huffman code (RFC 7541, section 5.2 and Appendix B), decoding
 * only: header strings an HTTP/2 peer sends may be Huffman-coded, and
 * grpc-go and nghttp2 (grpc-js) code most of theirs. This client never
 * codes its own (section 5.2 lets an encoder choose), so no encoder is
 * kept.
 *
 * The code is canonical: the codes follow from their lengths alone, each
 * length's codes counting up from the first code of that length, symbols in
 * order. So only Appendix B's "len in bits" column is written down, and
 * the decoder keeps, per length, the first code and where its symbols
 * start; test/unit/http2/hpack-huffman.test.ts checks the result
 * against the RFC's own examples.
 */

/** The code length in bits of each symbol: the 256 octets, then EOS (256). */
const codeLengths: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,  // 0-15
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,  // 16-31
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,  // 32-47
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,  // 48-63
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,  // 64-79
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,  // 80-95
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,  // 96-111
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,  // 112-127
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,  // 128-143
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,  // 144-159
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,  // 160-175
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,  // 176-191
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,  // 192-207
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,  // 208-223
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,  // 224-239
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,  // 240-255
  30,  // 256-256
];

/** The end-of-string symbol: never valid inside a string (section 5.2). */
const endOfString = 256;

/** The longest code, EOS's. */
const maxCodeLength = 30;

/**
 * CanonicalCode is the decoding table: symbols sorted by (length, symbol),
 * and per length the first code, the index of its first symbol in
 * `symbols`, and how many codes it has.
 */
interface CanonicalCode {
  readonly symbols: Uint16Array;
  readonly firstCode: Uint32Array;
  readonly firstIndex: Uint16Array;
  readonly count: Uint16Array;
}

function buildCanonicalCode(lengths: readonly number[]): CanonicalCode {
  const count = new Uint16Array(maxCodeLength + 1);
  for (const length of lengths) count[length] = (count[length] ?? 0) + 1;
  const symbols = new Uint16Array(lengths.length);
  const firstIndex = new Uint16Array(maxCodeLength + 1);
  const firstCode = new Uint32Array(maxCodeLength + 1);
  let index = 0;
  let code = 0;
  for (let length = 1; length <= maxCodeLength; length++) {
    firstIndex[length] = index;
    firstCode[length] = code;
    for (let symbol = 0; symbol < lengths.length; symbol++) {
      if (lengths[symbol] === length) symbols[index++] = symbol;
    }
    // The next length's first code: one past this length's last, one bit longer.
    code = (code + (count[length] ?? 0)) * 2;
  }
  return { symbols, firstCode, firstIndex, count };
}

const canonical = buildCanonicalCode(codeLengths);

/** HuffmanDecodingError: a string that is not a valid HPACK Huffman coding (a COMPRESSION_ERROR for the connection). */
export class HuffmanDecodingError extends Error {
  override readonly name = "HuffmanDecodingError";
}

/**
 * The octets of the string being decoded, reused from one string to the
 * next and made into a string in one go at its end: appending each symbol
 * to a string made a rope node per character, about 1 KiB of garbage for
 * each audit ID the API server sends with every answer (issue 36).
 */
let decoded = Buffer.allocUnsafe(256);

/**
 * decodeHuffman decodes `bytes[start, end)` into the octets they code, as
 * a latin1 string (HTTP field values are octets). The padding must be at
 * most 7 bits, all ones (EOS's prefix), and EOS itself must not appear.
 */
export function decodeHuffman(bytes: Uint8Array, start: number, end: number): string {
  const { symbols, firstCode, firstIndex, count } = canonical;
  // The shortest code is 5 bits: no string decodes to more octets than this.
  const most = Math.ceil(((end - start) * 8) / 5);
  if (decoded.length < most) decoded = Buffer.allocUnsafe(most);
  let length = 0;
  let code = 0;
  let codeLength = 0;
  for (let i = start; i < end; i++) {
    const octet = bytes[i] as number;
    for (let bit = 7; bit >= 0; bit--) {
      code = code * 2 + ((octet >> bit) & 1);
      codeLength++;
      const offset = code - (firstCode[codeLength] as number);
      if (offset >= 0 && offset < (count[codeLength] as number)) {
        const symbol = symbols[(firstIndex[codeLength] as number) + offset] as number;
        if (symbol === endOfString) throw new HuffmanDecodingError("the Huffman-coded string holds EOS");
        decoded[length++] = symbol;
        code = 0;
        codeLength = 0;
      } else if (codeLength >= maxCodeLength) {
        throw new HuffmanDecodingError("the Huffman-coded string holds no valid code");
      }
    }
  }
  // What is left must be padding: fewer than 8 bits, all ones.
  if (codeLength > 7) throw new HuffmanDecodingError("the Huffman-coded string ends in more than 7 bits of padding");
  if (code !== 2 ** codeLength - 1) throw new HuffmanDecodingError("the Huffman-coded string's padding is not EOS's prefix");
  return decoded.toString("latin1", 0, length);
}
