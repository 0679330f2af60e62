/**
 * Maps an OpenAI-wire SSE body to canonical stream chunks: decode framing, stop at `[DONE]`, turn an
 * in-band `{"error": …}` event into an UpstreamError, and check that each event is a JSON object.
 */
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import { SseParser } from '../../lib/sse.ts';
import { UpstreamError } from '../upstream-error.ts';
import { providerCodeOf } from './openai-errors.ts';
import { RawChunk } from './raw-chunk.ts';

export async function* openAiChunks(body: AsyncIterable<Buffer>): AsyncGenerator<StreamChunk> {
  const parser = new SseParser();
  const decoder = new TextDecoder('utf-8');
  for await (const bytes of body) {
    const events = parser.push(decoder.decode(bytes, { stream: true }));
    for (let index = 0; index < events.length; index++) {
      const data = events[index]!.data;
      if (data === '[DONE]') return;
      yield toChunk(data);
    }
  }
  for (const event of parser.push(`${decoder.decode()}\n\n`)) {
    if (event.data === '[DONE]') return;
    yield toChunk(event.data);
  }
  // The stream ended without [DONE]: the answer may be incomplete.
  throw new UpstreamError({
    kind: 'protocol',
    retryable: true,
    message: 'the upstream stream ended without [DONE]',
  });
}

function toChunk(data: string): StreamChunk {
  if (data.charCodeAt(0) !== 123 /* { */) {
    throw new UpstreamError({
      kind: 'protocol',
      retryable: true,
      message: 'the upstream sent an event that is not JSON',
    });
  }
  if (data.startsWith('{"error"')) {
    const providerCode = providerCodeOf(data);
    throw new UpstreamError({
      kind: 'protocol',
      retryable: true,
      message: 'the upstream reported an error in the stream',
      ...(providerCode ? { providerCode } : {}),
    });
  }
  try {
    return new RawChunk(data);
  } catch {
    throw new UpstreamError({
      kind: 'protocol',
      retryable: true,
      message: 'the upstream sent malformed JSON in the stream',
    });
  }
}
