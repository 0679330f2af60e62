/**
 * Runs one batch item as an individual governed call: the line's body decoded by the endpoint's wire
 * decoder, then the text pipeline (chat, never streaming) or the modality pipeline (embeddings) with
 * the batch owner's Caller, so admission, routing, failover and spend are those of a synchronous
 * request. The answer becomes the output line's `response`; a GatewayError becomes an error line's
 * `response` (its status and envelope) or, when the worker should try again, a decision to retry or
 * delay (item-decisions.ts).
 */
import type { Caller } from '../canonical/caller.ts';
import { isGatewayError } from '../lib/gateway-error.ts';
import type { ModalityPipeline } from '../proxy/modality-pipeline.ts';
import type { TextPipeline } from '../proxy/text-pipeline.ts';
import { decodeChatRequest } from '../wire/chat/decode-chat-request.ts';
import { asGatewayError } from '../wire/chat/encode-chat-stream.ts';
import { decodeEmbeddingRequest } from '../wire/embeddings/decode-embedding-request.ts';
import { encodeEmbeddingResponse } from '../wire/embeddings/encode-embedding-response.ts';
import type { ItemResponse } from './batch-lines.ts';

export interface ItemPipelines {
  text: Pick<TextPipeline, 'run'>;
  modalities: Pick<ModalityPipeline, 'embed'>;
}

export type ItemRun =
  | { kind: 'answered'; response: ItemResponse }
  | { kind: 'refused'; response: ItemResponse; status: number; retryAfter: number | undefined };

export async function runItem(
  pipelines: ItemPipelines,
  endpoint: string,
  body: string,
  caller: Caller,
  requestId: string,
  signal: AbortSignal,
): Promise<ItemRun> {
  try {
    const parsed: unknown = JSON.parse(body);
    if (endpoint === '/v1/embeddings') {
      const request = decodeEmbeddingRequest(parsed);
      const outcome = await pipelines.modalities.embed(request, {
        caller,
        signal,
        requestId,
        tokenEstimate: Math.ceil(body.length / 4),
      });
      const json = encodeEmbeddingResponse(outcome.value, request);
      return {
        kind: 'answered',
        response: { status_code: 200, request_id: requestId, body: JSON.parse(json) },
      };
    }
    const request = { ...decodeChatRequest(parsed), stream: false };
    const outcome = await pipelines.text.run(
      request,
      { caller, signal, requestId, bodyBytes: body.length },
      {
        path: '/v1/chat/completions',
      },
    );
    if (outcome.kind !== 'json') throw new Error('a batch chat item answered with a stream');
    const answer = outcome.json !== undefined ? JSON.parse(outcome.json) : outcome.response;
    return { kind: 'answered', response: { status_code: 200, request_id: requestId, body: answer } };
  } catch (error) {
    const failure = isGatewayError(error) ? error : asGatewayError(error);
    return {
      kind: 'refused',
      response: { status_code: failure.status, request_id: requestId, body: failure.toBody() },
      status: failure.status,
      retryAfter: failure.retryAfter,
    };
  }
}
