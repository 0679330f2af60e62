/** The event-stream frame decoder: any byte split, frames across chunks, corrupt CRCs and bad lengths. */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UpstreamError } from '../upstream-error.ts';
import { EventStreamFrames, type Message } from './event-stream-frames.ts';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function frame(type: string, payload: object): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'event' },
      ':event-type': { type: 'string', value: type },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

const frames = [
  frame('messageStart', { role: 'assistant' }),
  frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'héllo ✓' } }),
  frame('messageStop', { stopReason: 'end_turn' }),
];
const stream = Buffer.concat(frames);

function summary(messages: Message[]): string[] {
  return messages.map(
    (message) => `${message.headers[':event-type']?.value} ${Buffer.from(message.body).toString('utf8')}`,
  );
}

const expected = summary(frames.map((bytes) => codec.decode(bytes)));

function decodeInPieces(pieces: Uint8Array[]): { messages: Message[]; decoder: EventStreamFrames } {
  const decoder = new EventStreamFrames();
  const messages = pieces.flatMap((piece) => decoder.push(piece));
  return { messages, decoder };
}

function thrown(action: () => unknown): UpstreamError {
  try {
    action();
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('expected an UpstreamError');
}

describe('EventStreamFrames', () => {
  it('decodes the same frames whatever single position the bytes are split at', () => {
    for (let at = 0; at <= stream.length; at++) {
      const { messages, decoder } = decodeInPieces([stream.subarray(0, at), stream.subarray(at)]);
      expect(summary(messages), `split at ${at}`).toEqual(expected);
      expect(decoder.incomplete).toBe(false);
    }
  });

  it('decodes the stream fed one byte at a time', () => {
    const pieces = Array.from(stream, (byte) => Uint8Array.of(byte));
    expect(summary(decodeInPieces(pieces).messages)).toEqual(expected);
  });

  it('decodes a frame split over three chunks, with the next frame starting in the last one', () => {
    const first = frames[0]!.length;
    const pieces = [
      stream.subarray(0, first + 2),
      stream.subarray(first + 2, first + 9),
      stream.subarray(first + 9),
    ];
    expect(summary(decodeInPieces(pieces).messages)).toEqual(expected);
  });

  it('reports a body that ends inside a frame as incomplete', () => {
    const { messages, decoder } = decodeInPieces([stream.subarray(0, stream.length - 3)]);
    expect(messages).toHaveLength(2);
    expect(decoder.incomplete).toBe(true);
  });

  it('refuses a frame whose message CRC does not match', () => {
    const corrupt = Buffer.from(frames[1]!);
    corrupt[corrupt.length - 10]! ^= 0x01;
    expect(thrown(() => new EventStreamFrames().push(corrupt))).toMatchObject({
      kind: 'protocol',
      retryable: true,
    });
  });

  it('refuses a frame whose prelude CRC does not match', () => {
    const corrupt = Buffer.from(frames[0]!);
    corrupt[5]! ^= 0x01;
    expect(thrown(() => new EventStreamFrames().push(corrupt)).kind).toBe('protocol');
  });

  it('refuses a prelude length over 16 MiB before buffering anything', () => {
    const prelude = Buffer.alloc(12);
    prelude.writeUInt32BE(16 * 1024 * 1024 + 1, 0);
    const decoder = new EventStreamFrames();
    expect(thrown(() => decoder.push(prelude.subarray(0, 4)))).toMatchObject({
      kind: 'protocol',
      retryable: true,
    });
  });

  it('refuses an oversize length that arrives one byte at a time', () => {
    const prelude = Buffer.alloc(4);
    prelude.writeUInt32BE(0xffffffff, 0);
    const decoder = new EventStreamFrames();
    for (let at = 0; at < 3; at++) expect(decoder.push(prelude.subarray(at, at + 1))).toEqual([]);
    expect(thrown(() => decoder.push(prelude.subarray(3))).kind).toBe('protocol');
  });

  it('refuses a length below the 16-byte minimum', () => {
    const prelude = Buffer.alloc(12);
    prelude.writeUInt32BE(15, 0);
    expect(thrown(() => new EventStreamFrames().push(prelude)).kind).toBe('protocol');
  });

  // Linear time, stated as work rather than wall-clock time (which a loaded machine stretches): the
  // bytes the decoder copies while joining pieces of a frame. A decoder that re-joined its whole buffer
  // on every push would copy quadratically many.
  describe('copies each byte a bounded number of times (linear in the input)', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    function copiedWhile(decode: () => void): number {
      let copied = 0;
      const concat = Buffer.concat.bind(Buffer);
      vi.spyOn(Buffer, 'concat').mockImplementation((list, totalLength) => {
        const joined = concat(list, totalLength);
        copied += joined.length;
        return joined;
      });
      decode();
      return copied;
    }

    it('decodes many frames in one chunk without copying any of them', () => {
      const many = Buffer.concat(Array.from({ length: 20_000 }, () => frames[1]!));
      let decoded: Message[] = [];
      const copied = copiedWhile(() => {
        decoded = new EventStreamFrames().push(many);
      });
      expect(decoded).toHaveLength(20_000);
      expect(copied).toBe(0);
    });

    it('decodes many frames arriving one byte at a time copying at most twice the input', () => {
      const many = Buffer.concat(Array.from({ length: 200 }, () => frames[1]!));
      const decoder = new EventStreamFrames();
      let decoded = 0;
      const copied = copiedWhile(() => {
        for (let at = 0; at < many.length; at++) decoded += decoder.push(many.subarray(at, at + 1)).length;
      });
      expect(decoded).toBe(200);
      expect(copied).toBeLessThanOrEqual(2 * many.length);
    });
  });
});
