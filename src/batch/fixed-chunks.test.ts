import { describe, expect, it } from 'vitest';
import { fixedChunks } from './fixed-chunks.ts';

async function collect(pieces: Uint8Array[], size: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const chunk of fixedChunks(
    (async function* () {
      yield* pieces;
    })(),
    size,
  ))
    out.push(Buffer.from(chunk)); // a copy: the generator may not be trusted to leave a yielded buffer alone
  return out;
}

describe('fixedChunks', () => {
  it('regroups pieces of any size into chunks of exactly the size, the last one shorter, byte for byte', async () => {
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, index) => (index * 31) % 256));
    const pieces = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 372].map((end, index, ends) =>
      bytes.subarray(index === 0 ? 0 : ends[index - 1], end),
    );
    pieces.push(bytes.subarray(372), Buffer.alloc(0));
    const chunks = await collect(pieces, 64);
    expect(chunks.map((chunk) => chunk.length)).toEqual([...Array(15).fill(64), 40]);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  });

  it('splits one piece larger than several chunks, and yields nothing for an empty source', async () => {
    expect((await collect([Buffer.alloc(200, 7)], 64)).map((chunk) => chunk.length)).toEqual([64, 64, 64, 8]);
    expect(await collect([], 64)).toEqual([]);
    expect((await collect([Buffer.alloc(128)], 64)).map((chunk) => chunk.length)).toEqual([64, 64]);
  });

  it('never reuses a buffer it yielded: a consumer may keep every chunk', async () => {
    const kept: Buffer[] = [];
    for await (const chunk of fixedChunks(
      (async function* () {
        for (let value = 0; value < 4; value++) yield Buffer.alloc(10, value);
      })(),
      10,
    ))
      kept.push(chunk);
    expect(kept.map((chunk) => chunk[0])).toEqual([0, 1, 2, 3]);
  });
});

describe('fixedChunks with whole characters', () => {
  it('never cuts a UTF-8 character: each piece decodes alone, and together they are the input', async () => {
    const text = 'aé€😀'.repeat(50) + 'ß😀'.repeat(30);
    const bytes = Buffer.from(text);
    for (const size of [4, 5, 7, 16, 33]) {
      const out: Buffer[] = [];
      for await (const chunk of fixedChunks(
        (async function* () {
          for (let offset = 0; offset < bytes.length; offset += 3) yield bytes.subarray(offset, offset + 3);
        })(),
        size,
        { wholeCharacters: true },
      ))
        out.push(chunk);
      const decoder = new TextDecoder('utf-8', { fatal: true });
      expect(out.map((chunk) => decoder.decode(chunk)).join('')).toBe(text);
      expect(Math.max(...out.map((chunk) => chunk.length))).toBeLessThanOrEqual(size);
      // Some piece was shortened to keep a character whole (the input has 2-, 3- and 4-byte ones).
      expect(out.slice(0, -1).some((chunk) => chunk.length < size)).toBe(true);
    }
  });
});
