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
export function encodeHeaderBlock(fields: readonly HeaderField[]): Uint8Array {
  const out: number[] = [];
  for (const [name, value] of fields) {
    const whole = wholeFieldIndex.get(`${name}\0${value}`);
    if (whole !== undefined) {
      writeInteger(out, 0x80, 7, whole);
      continue;
    }
    const nameIndex = nameIndexes.get(name);
    if (nameIndex !== undefined) {
      writeInteger(out, 0x00, 4, nameIndex);
    } else {
      out.push(0x00);
      writeString(out, name);
    }
    writeString(out, value);
  }
  return Uint8Array.from(out);
}

/** The static table's index of each whole field, keyed by name NUL value. */
const wholeFieldIndex = new Map<string, number>();
/** The static table's first index of each name. */
const nameIndexes = new Map<string, number>();
staticTable.forEach(([name, value], i) => {
  wholeFieldIndex.set(`${name}\0${value}`, i + 1);
  if (!nameIndexes.has(name)) nameIndexes.set(name, i + 1);
});

/** writeInteger appends `value` with an N-bit prefix (section 5.1), the prefix's high bits set to `pattern`. */
function writeInteger(out: number[], pattern: number, prefixBits: number, value: number): void {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out.push(pattern | value);
    return;
  }
  out.push(pattern | max);
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/** writeString appends a string literal, not Huffman-coded (section 5.2). */
function writeString(out: number[], value: string): void {
  writeInteger(out, 0x00, 7, value.length);
  for (let i = 0; i < value.length; i++) out.push(value.charCodeAt(i) & 0xff);
}
