/**
 * Regroups a byte stream into pieces of `size` bytes (the last one shorter), holding one piece being
 * filled and the source's current piece: the unit in which the stores write a file. With
 * `wholeCharacters`, a piece ends before a UTF-8 character it would cut (so it is up to 3 bytes
 * shorter), and that character starts the next piece: each piece of valid UTF-8 is valid UTF-8.
 */
export async function* fixedChunks(
  source: AsyncIterable<Uint8Array>,
  size: number,
  options: { wholeCharacters?: boolean } = {},
): AsyncGenerator<Buffer> {
  // A new buffer per piece: the one yielded may still be referenced by whoever consumed it.
  let chunk: Buffer | undefined;
  let filled = 0;
  for await (const piece of source) {
    for (let offset = 0; offset < piece.byteLength; ) {
      chunk ??= Buffer.allocUnsafe(size);
      const taken = Math.min(size - filled, piece.byteLength - offset);
      chunk.set(piece.subarray(offset, offset + taken), filled);
      filled += taken;
      offset += taken;
      if (filled === size) {
        const cut = options.wholeCharacters ? characterBoundary(chunk) : size;
        const carry = chunk.subarray(cut);
        yield chunk.subarray(0, cut);
        chunk = undefined;
        filled = carry.length;
        if (filled > 0) {
          chunk = Buffer.allocUnsafe(size);
          chunk.set(carry);
        }
      }
    }
  }
  if (chunk && filled > 0) yield chunk.subarray(0, filled);
}

/** Where the last whole UTF-8 character of a full buffer ends (its length when none is cut). */
function characterBoundary(chunk: Buffer): number {
  // The last character starts at the last byte that is not a continuation byte (10xxxxxx).
  let start = chunk.length - 1;
  while (start > 0 && chunk.length - start < 4 && (chunk[start]! & 0xc0) === 0x80) start--;
  const lead = chunk[start]!;
  const length = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  // A buffer shorter than one character (start 0) cannot keep it whole: cut it rather than loop.
  return start > 0 && start + length > chunk.length ? start : chunk.length;
}
