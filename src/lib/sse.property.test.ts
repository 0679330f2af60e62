/**
 * Properties of the SSE decoder every streaming upstream goes through (issue 18), extending the
 * example tests of sse.test.ts: any event sequence written with any line ends and split at any byte
 * gives back exactly those events, multi-byte characters included; any bytes at all give the same
 * events however they are split and fail, if at all, only with SseLimitError; an endless line fails
 * cleanly within one piece of its bound instead of buffering without end.
 * A failure prints its seed and path: FUZZ_SEED=… FUZZ_PATH=… replays it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParameters } from '../../test/support/fuzz-parameters.ts';
import { decodeSse, type SseEvent, SseLimitError, SseParser } from './sse.ts';

/** A line's text: any characters (astral ones too), never a line end. */
const lineText = fc.string({ unit: 'binary', maxLength: 30 }).map((text) => text.replace(/[\r\n]/g, ''));
const lineEnd = fc.constantFrom('\n', '\r\n', '\r');

interface SourceEvent {
  event: string | undefined;
  id: string | undefined;
  dataLines: string[];
  comment: string | undefined;
}

const sourceEvent: fc.Arbitrary<SourceEvent> = fc.record({
  event: fc.option(
    lineText.filter((text) => text.length > 0),
    { nil: undefined },
  ),
  id: fc.option(
    lineText.map((text) => text.replace(/\0/g, '')),
    { nil: undefined },
  ),
  dataLines: fc.array(lineText, { minLength: 1, maxLength: 4 }),
  comment: fc.option(lineText, { nil: undefined }),
});

/** Writes events as a server would, each line ended by one of the three line ends. */
function writeStream(events: SourceEvent[], ends: string[]): string {
  let text = '';
  let index = 0;
  const line = (content: string) => {
    const end = ends[index++ % ends.length]!;
    // A CR then an empty line ended by LF is one CRLF: a real server's empty line would be CRLF there.
    text += content + (end === '\n' && content === '' && text.endsWith('\r') ? '\r\n' : end);
  };
  for (const event of events) {
    if (event.comment !== undefined) line(`:${event.comment}`);
    if (event.event !== undefined) line(`event: ${event.event}`);
    if (event.id !== undefined) line(`id: ${event.id}`);
    for (const data of event.dataLines) line(`data: ${data}`);
    line('');
  }
  return text;
}

/** What the WHATWG rules say those events decode to (the id is sticky across events). */
function expectedEvents(events: SourceEvent[]): SseEvent[] {
  let lastId: string | undefined;
  return events.map((event) => {
    if (event.id !== undefined) lastId = event.id;
    return { event: event.event, data: event.dataLines.join('\n'), id: lastId };
  });
}

/** Cuts bytes at the given offsets (sorted, deduplicated, any of them may fall inside a character). */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const offsets = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let start = 0;
  for (const offset of [...offsets, bytes.length]) {
    pieces.push(bytes.slice(start, offset));
    start = offset;
  }
  return pieces;
}

async function decodeAll(pieces: Uint8Array[], parser?: SseParser): Promise<SseEvent[]> {
  if (parser) {
    const decoder = new TextDecoder('utf-8');
    const events: SseEvent[] = [];
    for (const piece of pieces) events.push(...parser.push(decoder.decode(piece, { stream: true })));
    events.push(...parser.push(`${decoder.decode()}\n\n`));
    return events;
  }
  async function* source() {
    yield* pieces;
  }
  const events: SseEvent[] = [];
  for await (const event of decodeSse(source())) events.push(event);
  return events;
}

const cuts = fc.array(fc.nat(), { maxLength: 40 });

describe('SSE decoder properties (issue 18: any split, any bytes, bounded)', () => {
  it('decodes any written event sequence exactly, whatever the line ends and the byte splits', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(sourceEvent, { maxLength: 8 }),
        fc.array(lineEnd, { minLength: 1, maxLength: 5 }),
        cuts,
        async (events, ends, at) => {
          const bytes = new TextEncoder().encode(writeStream(events, ends));
          expect(await decodeAll(split(bytes, at))).toEqual(expectedEvents(events));
        },
      ),
      fuzzParameters(300),
    );
  });

  it('gives the same events for arbitrary bytes however they are split, failing only with SseLimitError', async () => {
    // The line bound is left out here: a long line that arrives whole in one piece is not buffered, so it
    // is not refused, while the same line split across pieces is (the third property covers that bound).
    const small = { maxLineLength: 1 << 20, maxEventLength: 128, maxDataLines: 4 };
    // Bytes biased toward the characters that matter to the framing and to UTF-8.
    const byte = fc.oneof(
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom(10, 13, 58, 32, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xef, 0xbb, 0xbf),
      fc.constantFrom(...Buffer.from('data: event: id: \n\n')),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(byte, { maxLength: 400 }), cuts, async (input, at) => {
        const bytes = Uint8Array.from(input);
        const outcome = async (pieces: Uint8Array[]) => {
          try {
            return { events: await decodeAll(pieces, new SseParser(small)) };
          } catch (error) {
            expect(error).toBeInstanceOf(SseLimitError);
            return { failed: true };
          }
        };
        const whole = await outcome([bytes]);
        // A bound is crossed by the same stream wherever it is cut, and the events agree otherwise.
        expect(await outcome(split(bytes, at))).toEqual(whole);
      }),
      fuzzParameters(300),
    );
  });

  it('refuses an endless line within one piece of its bound, however it arrives', () => {
    const maxLineLength = 1000;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 20 }),
        fc.constantFrom<string>('data: ', 'event: ', ': ', ''),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }).map((text) => text.replace(/[\r\n]/g, 'x')),
        (sizes, prefix, filler) => {
          const parser = new SseParser({ maxLineLength, maxEventLength: 1 << 20, maxDataLines: 1000 });
          let fed = 0;
          let largest = prefix.length;
          let piece = prefix;
          for (let round = 0; ; round++) {
            fed += piece.length;
            try {
              parser.push(piece);
            } catch (error) {
              expect(error).toBeInstanceOf(SseLimitError);
              // Thrown as soon as the unfinished line passes the bound: at most one piece past it.
              expect(fed).toBeLessThanOrEqual(maxLineLength + largest);
              return;
            }
            expect(fed, 'kept buffering past the bound').toBeLessThanOrEqual(maxLineLength);
            const size = sizes[round % sizes.length]!;
            piece = filler.repeat(Math.ceil(size / filler.length)).slice(0, size);
            largest = Math.max(largest, piece.length);
          }
        },
      ),
      fuzzParameters(200),
    );
  });
});
