/**
 * Decodes an Anthropic Messages event stream into checked native events: bounded SSE framing, each
 * event's data a JSON object with a `type`, an `error` event as an UpstreamError, and the stream
 * complete only at `message_stop`. Also tracks the usage the stream reports, for accounting.
 */
import type { Usage } from '../../canonical/usage.ts';
import { type SseEvent, SseParser } from '../../lib/sse.ts';
import { protocolError } from '../upstream-exchange.ts';
import { streamErrorEvent } from './anthropic-errors.ts';
import { messagesUsage } from './from-messages-response.ts';

export interface NativeEvent {
  /** The SSE event name (or the data's `type` when the event has none). */
  event: string;
  /** The event's data as received. */
  data: string;
  parsed: Record<string, unknown> & { type: string };
}

export async function* messagesEvents(body: AsyncIterable<Buffer>): AsyncGenerator<NativeEvent> {
  const parser = new SseParser();
  const decoder = new TextDecoder('utf-8');
  for await (const bytes of body) {
    const events = parser.push(decoder.decode(bytes, { stream: true }));
    for (let index = 0; index < events.length; index++) {
      const native = toNativeEvent(events[index]!);
      yield native;
      if (native.parsed.type === 'message_stop') return;
    }
  }
  for (const event of parser.push(`${decoder.decode()}\n\n`)) {
    const native = toNativeEvent(event);
    yield native;
    if (native.parsed.type === 'message_stop') return;
  }
  // Without message_stop the answer may be incomplete.
  throw protocolError('the upstream stream ended before message_stop');
}

function toNativeEvent(event: SseEvent): NativeEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(event.data);
  } catch {
    throw protocolError('the upstream sent malformed JSON in the stream');
  }
  if (
    parsed === null ||
    typeof parsed !== 'object' ||
    Array.isArray(parsed) ||
    typeof (parsed as { type?: unknown }).type !== 'string'
  ) {
    throw protocolError('the upstream sent a stream event that is not a Messages event');
  }
  const typed = parsed as NativeEvent['parsed'];
  if (typed.type === 'error') throw streamErrorEvent(typed);
  return { event: event.event ?? typed.type, data: event.data, parsed: typed };
}

/**
 * The usage of a stream so far: message_start carries input and cache counts, message_delta the
 * cumulative output count (and, on newer API versions, the input counts again).
 */
export class StreamUsage {
  private readonly counts: Record<string, number> = {};

  /** Records the counts of `message_start` and `message_delta` events; other events are ignored. */
  observe(parsed: NativeEvent['parsed']): void {
    let usage: unknown;
    if (parsed.type === 'message_start') usage = (parsed.message as { usage?: unknown } | undefined)?.usage;
    else if (parsed.type === 'message_delta') usage = parsed.usage;
    if (usage === null || typeof usage !== 'object') return;
    for (const [key, value] of Object.entries(usage)) {
      if (typeof value === 'number' && Number.isInteger(value) && value >= 0) this.counts[key] = value;
    }
  }

  get current(): Usage | undefined {
    return messagesUsage(this.counts);
  }
}
