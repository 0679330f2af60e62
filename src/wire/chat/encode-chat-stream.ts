/** Encodes canonical chunks and stream errors as the chat-completions SSE wire format. */
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import { errors } from '../../lib/error-catalogue.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { encodeSseData } from '../../lib/sse.ts';

export const DONE_EVENT = 'data: [DONE]\n\n';

/**
 * The caller's event stream: every chunk as the upstream's JSON (usage-only chunks only when the caller
 * asked for usage), `[DONE]` once the pipeline completed (after accounting), or one in-band error.
 */
export async function* encodeChatStream(
  chunks: AsyncIterable<StreamChunk>,
  includeUsage: boolean,
): AsyncGenerator<string> {
  try {
    for await (const chunk of chunks) {
      if (chunk.usageOnly && !includeUsage) continue;
      yield encodeSseData(chunk.json);
    }
  } catch (error) {
    yield encodeChatStreamError(asGatewayError(error));
    return;
  }
  yield DONE_EVENT;
}

/** The in-band error event a stream ends with when it fails after content was sent (the SDK raises it). */
export function encodeChatStreamError(error: GatewayError): string {
  return encodeSseData(JSON.stringify(error.toBody()));
}

/** A failure that reached an encoder: the pipeline's GatewayError, or a 500 for anything of our own. */
export function asGatewayError(error: unknown): GatewayError {
  return error instanceof GatewayError ? error : errors.internal();
}
