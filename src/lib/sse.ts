/**
 * Server-sent events codec (WHATWG framing). The decoder turns a byte stream into events, handling
 * CR, LF and CRLF line ends, CRLF split across chunks, multi-line data and multi-byte characters split
 * across chunks; the encoder writes events. Neither stage buffers more than one unfinished line.
 *
 * Upstreams are not trusted: parsing is linear (each character is scanned once, however the stream is
 * split) and bounded: a line, an event's data and its number of data lines have limits, past which the
 * parser throws SseLimitError instead of growing without end (issue 9: one endless `data:` line held a
 * core for 30 s; data lines without a blank line grew the heap to 1.8 GB).
 */
export interface SseEvent {
  /** The `event:` field, or undefined for the default `message` type. */
  event: string | undefined;
  data: string;
  id: string | undefined;
}

export interface SseLimits {
  /** Longest line, in characters. */
  maxLineLength: number;
  /** Most data characters in one event. */
  maxEventLength: number;
  /** Most `data:` lines in one event. */
  maxDataLines: number;
}

/** 8 MiB like the MCP side's answers; far above any real event. */
export const DEFAULT_SSE_LIMITS: SseLimits = Object.freeze({
  maxLineLength: 8 * 1024 * 1024,
  maxEventLength: 8 * 1024 * 1024,
  maxDataLines: 100_000,
});

/** The stream crossed a bound of SseLimits (an upstream that misbehaves). */
export class SseLimitError extends Error {
  readonly code = 'SB_SSE_LIMIT';
  constructor(what: string) {
    super(`the event stream exceeded a bound: ${what}`);
    this.name = 'SseLimitError';
  }
}

export async function* decodeSse(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  const decoder = new TextDecoder('utf-8');
  for await (const piece of source) {
    const text = typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
    const events = parser.push(text);
    for (let index = 0; index < events.length; index++) yield events[index]!;
  }
  const rest = parser.push(`${decoder.decode()}\n\n`);
  for (const event of rest) yield event;
}

/** Incremental parser: feed text, get the events completed by it. */
export class SseParser {
  private readonly limits: SseLimits;
  /** The unfinished last line, kept as the pieces it arrived in (joined once, when it ends). */
  private pending: string[] = [];
  private pendingLength = 0;
  private dataLength = 0;
  private skipLeadingLineFeed = false;
  private started = false;
  private dataLines: string[] = [];
  private eventType: string | undefined = undefined;
  private lastId: string | undefined = undefined;

  constructor(limits: SseLimits = DEFAULT_SSE_LIMITS) {
    this.limits = limits;
  }

  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let input = text;
    if (!this.started && input.length > 0) {
      this.started = true;
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1);
    }
    if (this.skipLeadingLineFeed && input.length > 0) {
      if (input.charCodeAt(0) === 10) input = input.slice(1);
      this.skipLeadingLineFeed = false;
    }
    // Only this piece is scanned; an unfinished line is joined once, when its end arrives (linear).
    let start = 0;
    for (;;) {
      const lineEnd = findLineEnd(input, start);
      if (lineEnd === -1) break;
      let line = input.slice(start, lineEnd);
      if (this.pendingLength > 0) {
        this.pending.push(line);
        line = this.pending.join('');
        this.pending = [];
        this.pendingLength = 0;
      }
      this.processLine(line, events);
      if (input.charCodeAt(lineEnd) === 13) {
        if (lineEnd + 1 === input.length) {
          // A CR at the end of this piece may be followed by the LF of a CRLF in the next one.
          this.skipLeadingLineFeed = true;
          start = lineEnd + 1;
          break;
        }
        start = input.charCodeAt(lineEnd + 1) === 10 ? lineEnd + 2 : lineEnd + 1;
      } else {
        start = lineEnd + 1;
      }
    }
    if (start < input.length) {
      const rest = start === 0 ? input : input.slice(start);
      this.pending.push(rest);
      this.pendingLength += rest.length;
      if (this.pendingLength > this.limits.maxLineLength)
        throw new SseLimitError(`a line longer than ${this.limits.maxLineLength} characters`);
    }
    return events;
  }

  private processLine(line: string, events: SseEvent[]): void {
    if (line.length === 0) {
      if (this.dataLines.length > 0) {
        const data = this.dataLines.length === 1 ? this.dataLines[0]! : this.dataLines.join('\n');
        events.push({ event: this.eventType, data, id: this.lastId });
      }
      this.dataLines = [];
      this.dataLength = 0;
      this.eventType = undefined;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment, used as keep-alive
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.dataLength += value.length + 1;
      if (this.dataLength > this.limits.maxEventLength)
        throw new SseLimitError(`an event with more than ${this.limits.maxEventLength} characters of data`);
      if (this.dataLines.length >= this.limits.maxDataLines)
        throw new SseLimitError(`an event with more than ${this.limits.maxDataLines} data lines`);
      this.dataLines.push(value);
    } else if (field === 'event') this.eventType = value;
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
  }
}

function findLineEnd(text: string, from: number): number {
  for (let index = from; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 10 || code === 13) return index;
  }
  return -1;
}

/** One `data:` event. `data` must not contain line breaks (serialized JSON never does). */
export function encodeSseData(data: string): string {
  return `data: ${data}\n\n`;
}

/** A named event, as the messages-style wire format uses. */
export function encodeSseEvent(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}
