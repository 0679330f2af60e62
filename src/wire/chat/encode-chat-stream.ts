/** Encodes canonical chunks and stream errors as the chat-completions SSE wire format. */
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import type { GatewayError } from '../../lib/gateway-error.ts';
import { encodeSseData } from '../../lib/sse.ts';

export const DONE_EVENT = 'data: [DONE]\n\n';

export function encodeChatChunk(chunk: StreamChunk): string {
  return encodeSseData(chunk.json);
}

/** The in-band error event a stream ends with when it fails after content was sent (the SDK raises it). */
export function encodeChatStreamError(error: GatewayError): string {
  return encodeSseData(JSON.stringify(error.toBody()));
}
