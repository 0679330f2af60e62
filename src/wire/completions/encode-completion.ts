/** Encodes canonical answers and chunks as legacy `text_completion` JSON and SSE events. */
import type { StreamChunk } from '../../canonical/chat-chunk.ts';
import type { ChatCompletion } from '../../canonical/chat-response.ts';
import { encodeSseData } from '../../lib/sse.ts';
import { asGatewayError, DONE_EVENT, encodeChatStreamError } from '../chat/encode-chat-stream.ts';

export function encodeCompletion(response: ChatCompletion): string {
  return JSON.stringify({
    id: response.id,
    object: 'text_completion',
    created: response.created,
    model: response.model,
    choices: response.choices.map((choice) => ({
      text: choice.message.content ?? '',
      index: choice.index,
      logprobs: null,
      finish_reason: choice.finish_reason,
    })),
    ...(response.usage ? { usage: response.usage } : {}),
  });
}

/** Text deltas and finish reasons as `text_completion` chunks; usage only when asked; then `[DONE]`. */
export async function* encodeCompletionStream(
  chunks: AsyncIterable<StreamChunk>,
  includeUsage: boolean,
): AsyncGenerator<string> {
  try {
    for await (const { chunk, usage, usageOnly } of chunks) {
      if (usageOnly) {
        if (includeUsage) yield event(chunk, [], usage);
        continue;
      }
      const choices = chunk.choices
        .filter((choice) => (choice.delta.content ?? '') !== '' || choice.finish_reason !== null)
        .map((choice) => ({
          text: choice.delta.content ?? '',
          index: choice.index,
          logprobs: null,
          finish_reason: choice.finish_reason,
        }));
      if (choices.length > 0) yield event(chunk, choices, undefined);
    }
  } catch (error) {
    yield encodeChatStreamError(asGatewayError(error));
    return;
  }
  yield DONE_EVENT;
}

function event(chunk: StreamChunk['chunk'], choices: unknown[], usage: StreamChunk['usage']): string {
  return encodeSseData(
    JSON.stringify({
      id: chunk.id,
      object: 'text_completion',
      created: chunk.created,
      model: chunk.model,
      choices,
      ...(usage ? { usage } : {}),
    }),
  );
}
