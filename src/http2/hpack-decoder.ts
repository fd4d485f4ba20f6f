import { decodeHuffman, HuffmanDecodingError } from "./hpack-huffman";
import { staticTable } from "./hpack-static-table";

/** A header field as decoded: lowercase name, value as octets (latin1). */
export type HeaderField = readonly [name: string, value: string];

/** HpackDecodingError: a header block that cannot be decoded, a COMPRESSION_ERROR for the whole connection (RFC 9113, section 4.3). */
export class HpackDecodingError extends Error {
  override readonly name = "HpackDecodingError";
}

/** Each dynamic table entry counts its name and value octets plus this (RFC 7541, section 4.1). */
const entryOverhead = 32;

/**
 * HpackDecoder decodes the header blocks one HTTP/2 connection receives
 * (RFC 7541). It is stateful: the peer's encoder adds fields to a dynamic
 * table that later blocks refer to by index, so every block the connection
 * receives must pass through it, in order, even one for a stream nobody
 * waits on any more.
 *
 * Invariant: `dynamic` holds the newest entry first (index 62), and
 * `dynamicSize` is the sum of its entries' sizes, never above `maxSize`.
 */
export class HpackDecoder {
  private readonly dynamic: HeaderField[] = [];
  private dynamicSize = 0;
  private maxSize: number;

  /** `settingsMaxSize` is the SETTINGS_HEADER_TABLE_SIZE this side announced: the most a size update may ask for. */
  constructor(private readonly settingsMaxSize: number) {
    this.maxSize = settingsMaxSize;
  }

  decode(block: Buffer): HeaderField[] {
    const fields: HeaderField[] = [];
    const cursor = { at: 0 };
    let fieldSeen = false;
    while (cursor.at < block.length) {
      const first = block[cursor.at] as number;
      if (first & 0x80) {
        // Indexed header field (section 6.1).
        fields.push(this.field(readInteger(block, cursor, 7)));
      } else if (first & 0x40) {
        // Literal with incremental indexing (section 6.2.1): the field joins the dynamic table.
        const field = this.literal(block, cursor, 6);
        this.add(field);
        fields.push(field);
      } else if (first & 0x20) {
        // Dynamic table size update (section 6.3): only before the block's first field.
        if (fieldSeen) throw new HpackDecodingError("a dynamic table size update follows a header field");
        const size = readInteger(block, cursor, 5);
        if (size > this.settingsMaxSize) throw new HpackDecodingError(`a dynamic table size update to ${size} exceeds the ${this.settingsMaxSize} announced`);
        this.maxSize = size;
        this.evictTo(size);
        continue;
      } else {
        // Literal without indexing (0000) or never indexed (0001), section 6.2.2-3.
        fields.push(this.literal(block, cursor, 4));
      }
      fieldSeen = true;
    }
    return fields;
  }

  /** field is the table entry at a 1-based `index`: the static table's, then the dynamic one's. */
  private field(index: number): HeaderField {
    if (index === 0) throw new HpackDecodingError("index 0 names no header field");
    if (index <= staticTable.length) return staticTable[index - 1] as HeaderField;
    const entry = this.dynamic[index - staticTable.length - 1];
    if (entry === undefined) throw new HpackDecodingError(`index ${index} is past the dynamic table's ${this.dynamic.length} entries`);
    return entry;
  }

  /** literal reads a literal field whose name is indexed (a non-zero prefix) or follows as a string. */
  private literal(block: Buffer, cursor: Cursor, prefixBits: number): HeaderField {
    const nameIndex = readInteger(block, cursor, prefixBits);
    const name = nameIndex === 0 ? readString(block, cursor) : this.field(nameIndex)[0];
    return [name, readString(block, cursor)];
  }

  private add(field: HeaderField): void {
    const size = field[0].length + field[1].length + entryOverhead;
    // An entry larger than the table empties it and is not added (section 4.4).
    this.evictTo(Math.max(0, this.maxSize - size));
    if (size > this.maxSize) return;
    this.dynamic.unshift(field);
    this.dynamicSize += size;
  }

  private evictTo(size: number): void {
    while (this.dynamicSize > size) {
      const oldest = this.dynamic.pop() as HeaderField;
      this.dynamicSize -= oldest[0].length + oldest[1].length + entryOverhead;
    }
  }
}

interface Cursor {
  at: number;
}

/** readInteger reads an integer with an N-bit prefix (section 5.1), advancing the cursor. */
function readInteger(block: Uint8Array, cursor: Cursor, prefixBits: number): number {
  const max = (1 << prefixBits) - 1;
  let value = (block[cursor.at++] as number) & max;
  if (value < max) return value;
  let shift = 0;
  for (;;) {
    if (cursor.at >= block.length) throw new HpackDecodingError("the header block ends inside an integer");
    const octet = block[cursor.at++] as number;
    value += (octet & 0x7f) * 2 ** shift;
    shift += 7;
    if ((octet & 0x80) === 0) return value;
    // Nothing a header block holds needs more than 2^35: a longer run is an attack or garbage.
    if (shift > 28) throw new HpackDecodingError("an integer in the header block is too large");
  }
}

/** readString reads a string literal (section 5.2): a Huffman flag, a 7-bit-prefix length, the octets. */
function readString(block: Buffer, cursor: Cursor): string {
  if (cursor.at >= block.length) throw new HpackDecodingError("the header block ends before a string");
  const huffman = ((block[cursor.at] as number) & 0x80) !== 0;
  const length = readInteger(block, cursor, 7);
  const start = cursor.at;
  const end = start + length;
  if (end > block.length) throw new HpackDecodingError("a string runs past the end of the header block");
  cursor.at = end;
  // Field values are octets: each one character (latin1), the string made in one go.
  if (!huffman) return block.toString("latin1", start, end);
  try {
    return decodeHuffman(block, start, end);
  } catch (e: unknown) {
    if (e instanceof HuffmanDecodingError) throw new HpackDecodingError(e.message);
    throw e;
  }
}
