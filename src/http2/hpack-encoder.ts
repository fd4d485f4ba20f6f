import type { HeaderField } from "./hpack-decoder";
import { staticTable } from "./hpack-static-table";

/**
 * encodeHeaderBlock encodes a request's header fields (RFC 7541) without
 * state: a field the static table holds whole is sent by its index, any
 * other as a literal that is never added to the peer's dynamic table
 * (section 6.2.2), its name by index when the static table has it, and no
 * string is Huffman-coded. A unary gRPC request's block is a few hundred
 * octets to a local socket; a dynamic table would save octets nobody
 * waits for, at the price of state shared with every call on the
 * connection.
 *
 * Names must be lowercase (RFC 9113, section 8.2.1), as Connect's Headers
 * give them; values are written as octets (latin1).
 */
export function encodeHeaderBlock(fields: readonly HeaderField[]): Buffer {
  // Each field costs at most its two strings and five octets per integer
  // (three integers); the strings are copied into the block by the runtime
  // (Buffer.write), not pushed octet by octet: a request's block carries
  // its path and credentials, hundreds of octets each call (issue 36).
  let most = 0;
  for (const [name, value] of fields) most += name.length + value.length + 15;
  const out = Buffer.allocUnsafe(most);
  let at = 0;
  for (const [name, value] of fields) {
    const whole = wholeFieldIndex.get(name)?.get(value);
    if (whole !== undefined) {
      at = writeInteger(out, at, 0x80, 7, whole);
      continue;
    }
    const nameIndex = nameIndexes.get(name);
    if (nameIndex !== undefined) {
      at = writeInteger(out, at, 0x00, 4, nameIndex);
    } else {
      out[at++] = 0x00;
      at = writeString(out, at, name);
    }
    at = writeString(out, at, value);
  }
  return out.subarray(0, at);
}

/** The static table's index of each whole field, by name and then value. */
const wholeFieldIndex = new Map<string, Map<string, number>>();
/** The static table's first index of each name. */
const nameIndexes = new Map<string, number>();
staticTable.forEach(([name, value], i) => {
  let byValue = wholeFieldIndex.get(name);
  if (byValue === undefined) wholeFieldIndex.set(name, (byValue = new Map()));
  byValue.set(value, i + 1);
  if (!nameIndexes.has(name)) nameIndexes.set(name, i + 1);
});

/** writeInteger writes `value` at `at` with an N-bit prefix (section 5.1), the prefix's high bits set to `pattern`; it returns the offset after it. */
function writeInteger(out: Buffer, at: number, pattern: number, prefixBits: number, value: number): number {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out[at++] = pattern | value;
    return at;
  }
  out[at++] = pattern | max;
  let rest = value - max;
  while (rest >= 0x80) {
    out[at++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  out[at++] = rest;
  return at;
}

/** writeString writes a string literal at `at`, not Huffman-coded (section 5.2), each character as its low octet (latin1); it returns the offset after it. */
function writeString(out: Buffer, at: number, value: string): number {
  at = writeInteger(out, at, 0x00, 7, value.length);
  return at + out.write(value, at, "latin1");
}
