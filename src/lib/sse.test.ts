import { describe, expect, it } from 'vitest';
import { decodeSse, encodeSseData, type SseEvent, SseLimitError, SseParser } from './sse.ts';

async function collect(pieces: Array<string | Uint8Array>): Promise<SseEvent[]> {
  async function* source() {
    for (const piece of pieces) yield piece;
  }
  const events: SseEvent[] = [];
  for await (const event of decodeSse(source())) events.push(event);
  return events;
}

const stream = 'data: {"a":1}\n\nevent: ping\ndata: x\n\n: keep-alive\n\ndata: [DONE]\n\n';

describe('SSE decoder bounds (issue 9: an endless line held a core, unended events grew the heap)', () => {
  const small = { maxLineLength: 100, maxEventLength: 250, maxDataLines: 5 };

  it('refuses a line longer than the bound, however it is split', () => {
    const parser = new SseParser(small);
    expect(() => {
      for (let index = 0; index < 20; index++) parser.push(`data: ${'x'.repeat(9)}`);
    }).toThrow(SseLimitError);
  });

  it('refuses an event whose data lines never end with a blank line', () => {
    const parser = new SseParser(small);
    expect(() => {
      for (let index = 0; index < 10; index++) parser.push(`data: ${'y'.repeat(60)}\n`);
    }).toThrow(/characters of data/);
    const lines = new SseParser(small);
    expect(() => lines.push('data:\n'.repeat(6))).toThrow(/data lines/);
  });

  it('resets the event budget at every blank line', () => {
    const parser = new SseParser(small);
    let events = 0;
    for (let index = 0; index < 100; index++) events += parser.push(`data: ${'z'.repeat(60)}\n\n`).length;
    expect(events).toBe(100);
  });

  it('scans an unfinished line only once: a long line fed in small pieces is still parsed', () => {
    const parser = new SseParser();
    const piece = 'a'.repeat(1024);
    for (let index = 0; index < 4096; index++) parser.push(index === 0 ? `data: ${piece}` : piece);
    const [event] = parser.push('\n\n');
    expect(event!.data.length).toBe(4096 * 1024);
  });
});

describe('SSE decoder', () => {
  it('yields each data event with its event type and skips comments', async () => {
    const events = await collect([stream]);
    expect(events.map((event) => [event.event, event.data])).toEqual([
      [undefined, '{"a":1}'],
      ['ping', 'x'],
      [undefined, '[DONE]'],
    ]);
  });

  it('gives the same events however the bytes are split', async () => {
    const bytes = new TextEncoder().encode(stream);
    const whole = await collect([bytes]);
    for (let size = 1; size <= 7; size++) {
      const pieces: Uint8Array[] = [];
      for (let offset = 0; offset < bytes.length; offset += size)
        pieces.push(bytes.slice(offset, offset + size));
      expect(await collect(pieces)).toEqual(whole);
    }
  });

  it('keeps multi-byte characters intact when a split falls inside one', async () => {
    const bytes = new TextEncoder().encode('data: {"t":"héllo 👋 世界"}\n\n');
    const pieces = Array.from(bytes, (byte) => Uint8Array.of(byte));
    const [event] = await collect(pieces);
    expect(JSON.parse(event!.data)).toEqual({ t: 'héllo 👋 世界' });
  });

  it('accepts CRLF and bare CR line ends, including a CRLF split across pieces', async () => {
    expect(await collect(['data: a\r', '\n\r\ndata: b\r\rdata: c\n\n'])).toEqual([
      { event: undefined, data: 'a', id: undefined },
      { event: undefined, data: 'b', id: undefined },
      { event: undefined, data: 'c', id: undefined },
    ]);
  });

  it('joins multi-line data with a line feed and strips only one leading space', async () => {
    const [event] = await collect(['data:  x\ndata:y\n\n']);
    expect(event!.data).toBe(' x\ny');
  });

  it('dispatches a final event that lacks its blank line when the stream ends', async () => {
    expect((await collect(['data: tail'])).map((event) => event.data)).toEqual(['tail']);
  });

  it('ignores a byte-order mark at the start', () => {
    expect(new SseParser().push('\ufeffdata: 1\n\n')[0]?.data).toBe('1');
  });
});

describe('SSE encoder', () => {
  it('frames data as one event the decoder reads back', async () => {
    const events = await collect([encodeSseData('{"b":2}')]);
    expect(events[0]?.data).toBe('{"b":2}');
  });
});
