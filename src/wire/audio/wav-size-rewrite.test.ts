/**
 * Spec rule 7 (WAV sizes of streamed speech), as properties over arbitrary header layouts, audio
 * lengths, placeholder sizes and chunk splits: the caller's bytes parse as a WAV whose RIFF and data
 * sizes are the real ones, and nothing but those two fields changes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/gateway-error.ts';
import {
  HeldBytes,
  MAX_HELD_WAV_BYTES,
  MAX_HELD_WAV_TOTAL_BYTES,
  parseWavHeader,
  rewriteWavSizes,
} from './wav-size-rewrite.ts';

interface Layout {
  fmtBytes: number;
  /** Chunks between `fmt ` and `data` (LIST, fact …), by body length (odd lengths get a pad byte). */
  extraChunks: number[];
  dataBytes: number;
}

function chunk(id: string, body: Buffer, declared = body.length): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(declared, 4);
  return Buffer.concat([header, body, body.length % 2 === 1 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

/** A WAV file of the layout with the given RIFF and data size fields. */
function wav(layout: Layout, riffSize: (real: number) => number, dataSize: (real: number) => number): Buffer {
  const fmt = Buffer.alloc(layout.fmtBytes);
  fmt.writeUInt16LE(1, 0); // PCM
  fmt.writeUInt16LE(1, 2); // mono
  fmt.writeUInt32LE(24_000, 4);
  const extras = layout.extraChunks.map((length, index) =>
    chunk(index % 2 === 0 ? 'LIST' : 'fact', Buffer.alloc(length, 0x41 + index)),
  );
  const audio = Buffer.alloc(layout.dataBytes);
  for (let index = 0; index < audio.length; index++) audio[index] = (index * 31) & 0xff;
  const data = chunk('data', audio, dataSize(layout.dataBytes)).subarray(0, 8 + layout.dataBytes);
  const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), chunk('fmt ', fmt), ...extras, data]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(riffSize(body.length), 4);
  return Buffer.concat([riff, body]);
}

/** `bytes` cut at the given (sorted, deduplicated) positions. */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const positions = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const position of [...positions, bytes.length]) {
    if (position > start) pieces.push(bytes.subarray(start, position));
    start = Math.max(start, position);
  }
  return pieces;
}

async function* stream(pieces: Buffer[]): AsyncGenerator<Buffer> {
  for (const piece of pieces) yield piece;
}

async function collect(audio: AsyncIterable<Buffer>): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for await (const piece of audio) pieces.push(piece);
  return Buffer.concat(pieces);
}

/** Asserts `out` is `original` with real sizes: parses it and compares every other byte. */
function expectRealSizes(out: Buffer, original: Buffer): void {
  expect(out.length).toBe(original.length);
  const header = parseWavHeader(out);
  if (header === 'more' || header === undefined) throw new Error('the result is not a WAV');
  expect(header.riffSize).toBe(out.length - 8);
  expect(header.dataSize).toBe(out.length - header.dataStart);
  const unchanged = (buffer: Buffer) =>
    Buffer.concat([buffer.subarray(8, header.dataSizeAt), buffer.subarray(header.dataSizeAt + 4)]);
  expect(unchanged(out).equals(unchanged(original))).toBe(true);
}

const layouts = fc.record({
  fmtBytes: fc.constantFrom(16, 18, 40),
  extraChunks: fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 3 }),
  dataBytes: fc.integer({ min: 0, max: 4000 }),
});
const placeholder = fc.constantFrom(0, 0xffffffff);
const cuts = fc.array(fc.nat(), { maxLength: 40 });

describe('WAV size rewrite (spec rule 7)', () => {
  it('fixes placeholder sizes once the stream ends when no length was announced, whatever the chunk splits', async () => {
    await fc.assert(
      fc.asyncProperty(
        layouts,
        fc.oneof(placeholder, fc.constant(-1)),
        placeholder,
        cuts,
        async (layout, riff, data, at) => {
          // -1 stands for the real RIFF size: a placeholder in the data chunk alone is fixed too.
          const original = wav(
            layout,
            (real) => (riff === -1 ? real : riff),
            () => data,
          );
          const out = await collect(rewriteWavSizes(stream(split(original, at)), undefined));
          expectRealSizes(out, original);
        },
      ),
    );
  });

  it('fixes placeholder or wrong sizes from the announced length, whatever the chunk splits', async () => {
    await fc.assert(
      fc.asyncProperty(
        layouts,
        fc.oneof(placeholder, fc.integer({ min: 1, max: 0xfffffffe })),
        fc.oneof(placeholder, fc.integer({ min: 1_000_000, max: 0xfffffffe })),
        cuts,
        async (layout, riff, data, at) => {
          const original = wav(
            layout,
            () => riff,
            () => data,
          );
          const out = await collect(rewriteWavSizes(stream(split(original, at)), original.length));
          expectRealSizes(out, original);
        },
      ),
    );
  });

  it('streams everything after the header at once when the length was announced (buffers only the header)', async () => {
    const original = wav(
      { fmtBytes: 16, extraChunks: [31], dataBytes: 3000 },
      () => 0xffffffff,
      () => 0xffffffff,
    );
    const pieces = split(original, [10, 50, 200, 1000, 2000]);
    let released = 0;
    let pulled = 0;
    async function* counted(): AsyncGenerator<Buffer> {
      for (const piece of pieces) {
        pulled++;
        yield piece;
      }
    }
    for await (const _ of rewriteWavSizes(counted(), original.length)) {
      released++;
      // The header (fmt + a LIST chunk) ends inside the third piece; later pieces pass one by one.
      expect(pulled - released).toBeLessThanOrEqual(2);
    }
    expect(released).toBe(pieces.length - 2);
  });

  it('passes bytes that are not a RIFF/WAVE stream through unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 2000 }),
        cuts,
        fc.boolean(),
        async (bytes, at, announced) => {
          const input = Buffer.from(bytes);
          fc.pre(input.subarray(0, 4).toString('latin1') !== 'RIFF');
          const out = await collect(
            rewriteWavSizes(stream(split(input, at)), announced ? input.length : undefined),
          );
          expect(out.equals(input)).toBe(true);
        },
      ),
    );
  });

  it('trusts real-looking sizes when no length was announced, without holding the audio', async () => {
    const original = wav(
      { fmtBytes: 16, extraChunks: [], dataBytes: 100 },
      (real) => real,
      (real) => real,
    );
    const out = await collect(rewriteWavSizes(stream(split(original, [20, 60])), undefined));
    expect(out.equals(original)).toBe(true);
  });

  it('keeps a real data size smaller than the rest (chunks after the audio) and fixes the RIFF size', async () => {
    const audio = wav(
      { fmtBytes: 16, extraChunks: [], dataBytes: 10 },
      () => 0,
      (real) => real,
    );
    const trailer = chunk('LIST', Buffer.alloc(6, 0x42));
    const original = Buffer.concat([audio, trailer]);
    const out = await collect(rewriteWavSizes(stream([original]), original.length));
    expect(out.readUInt32LE(4)).toBe(original.length - 8);
    expect(out.readUInt32LE(40)).toBe(10);
  });

  it('refuses to hold more than its bound when no length was announced', async () => {
    const original = wav(
      { fmtBytes: 16, extraChunks: [], dataBytes: 2000 },
      () => 0xffffffff,
      () => 0xffffffff,
    );
    const error = await collect(
      rewriteWavSizes(stream(split(original, [100, 1000])), undefined, { maxHeldBytes: 1500 }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(502);
    expect(MAX_HELD_WAV_BYTES).toBe(64 * 1024 * 1024);
  });

  it('bounds the WAV bytes held by all requests together: the one that would pass it is a 503, and held bytes are given back', async () => {
    const shared = new HeldBytes(3000);
    const placeholders = () =>
      wav(
        { fmtBytes: 16, extraChunks: [], dataBytes: 2000 },
        () => 0xffffffff,
        () => 0xffffffff,
      );
    // The first request holds its 2044 bytes while its upstream has not ended.
    let release!: () => void;
    const ended = new Promise<void>((resolve) => {
      release = resolve;
    });
    async function* slow(): AsyncGenerator<Buffer> {
      yield placeholders();
      await ended;
    }
    const first = collect(rewriteWavSizes(slow(), undefined, { shared }));
    while (shared.bytes === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(shared.bytes).toBe(2044);

    const error = await collect(
      rewriteWavSizes(stream(split(placeholders(), [100])), undefined, { shared }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 503, code: 'wav_hold_full', retryAfter: 1 });
    expect(shared.bytes).toBe(2044);

    release();
    expect((await first).readUInt32LE(4)).toBe(2044 - 8);
    expect(shared.bytes).toBe(0);
    const again = await collect(rewriteWavSizes(stream(split(placeholders(), [100])), undefined, { shared }));
    expect(again.readUInt32LE(4)).toBe(2044 - 8);
    expect(shared.bytes).toBe(0);
    expect(MAX_HELD_WAV_TOTAL_BYTES).toBe(4 * MAX_HELD_WAV_BYTES);
  });

  it('ends the upstream iterator when its consumer stops early (the caller left)', async () => {
    let finished = false;
    async function* upstream(): AsyncGenerator<Buffer> {
      try {
        yield wav(
          { fmtBytes: 16, extraChunks: [], dataBytes: 50 },
          () => 0,
          () => 0,
        );
        yield Buffer.alloc(100);
        yield Buffer.alloc(100);
      } finally {
        finished = true;
      }
    }
    for await (const _ of rewriteWavSizes(upstream(), 10_000)) break;
    expect(finished).toBe(true);
  });
});
