/**
 * Maps a Gemini `streamGenerateContent?alt=sse` body to canonical chunks. Each SSE event is a whole
 * GenerateContentResponse and there is no `[DONE]`: the body's end closes the stream, and a stream that
 * ends before any finishReason is an incomplete answer. One small state object; nothing is collected.
 */
import { type ChatCompletionChunk, chunkFromObject, type StreamChunk } from '../../canonical/chat-chunk.ts';
import type { Usage } from '../../canonical/usage.ts';
import { DEFAULT_SSE_LIMITS, type SseLimits, SseParser } from '../../lib/sse.ts';
import { protocolError } from '../upstream-exchange.ts';
import { finishReasonOf, firstCandidate, type ResponseIdentity, usageOf } from './from-gemini-response.ts';
import { shortCode } from './gemini-errors.ts';
import { toolCallId } from './gemini-tool-call-ids.ts';
import type { GeminiResponse } from './gemini-types.ts';

type Delta = ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: string };

export async function* geminiChunks(
  body: AsyncIterable<Buffer>,
  identity: ResponseIdentity,
  limits: SseLimits = DEFAULT_SSE_LIMITS,
): AsyncGenerator<StreamChunk> {
  const parser = new SseParser(limits);
  const decoder = new TextDecoder('utf-8');
  const state = new GeminiStreamState(identity);
  for await (const bytes of body) {
    const events = parser.push(decoder.decode(bytes, { stream: true }));
    for (let index = 0; index < events.length; index++) yield* state.map(parseEvent(events[index]!.data));
  }
  for (const event of parser.push(`${decoder.decode()}\n\n`)) yield* state.map(parseEvent(event.data));
  if (!state.finished) throw protocolError('the upstream stream ended before a finish reason');
  const usageChunk = state.usageChunk();
  if (usageChunk) yield usageChunk;
}

function parseEvent(data: string): GeminiResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw protocolError('the upstream sent malformed JSON in the stream');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw protocolError('the upstream sent an event that is not a Gemini response');
  const error = (parsed as { error?: { status?: unknown } }).error;
  if (error !== undefined)
    throw protocolError('the upstream reported an error in the stream', shortCode(error?.status));
  return parsed as GeminiResponse;
}

class GeminiStreamState {
  finished = false;
  private readonly identity: ResponseIdentity;
  private id: string | undefined;
  private model: string | undefined;
  private roleSent = false;
  private toolCalls = 0;
  private usage: Usage | undefined;

  constructor(identity: ResponseIdentity) {
    this.identity = identity;
  }

  /** The canonical chunks of one event (a candidate's parts, then its finish reason). */
  *map(response: GeminiResponse): Generator<StreamChunk> {
    this.id ??=
      typeof response.responseId === 'string' ? response.responseId : `chatcmpl-${this.identity.requestId}`;
    this.model ??= typeof response.modelVersion === 'string' ? response.modelVersion : this.identity.model;
    this.usage = usageOf(response.usageMetadata) ?? this.usage;
    // A trailing event may carry only usage; a blocked prompt has a blockReason and no candidates.
    if (!Array.isArray(response.candidates) && response.promptFeedback?.blockReason === undefined) return;
    const candidate = firstCandidate(response);
    for (const part of candidate.content?.parts ?? []) {
      if (typeof part.text === 'string' && part.text !== '') {
        yield this.chunk(part.thought === true ? { reasoning_content: part.text } : { content: part.text });
      } else if (part.functionCall && typeof part.functionCall.name === 'string') {
        const index = this.toolCalls++;
        const call = {
          index,
          id: toolCallId(index, part.thoughtSignature),
          type: 'function' as const,
          function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
        };
        yield this.chunk({ tool_calls: [call] });
      }
    }
    const reason = finishReasonOf(candidate.finishReason, this.toolCalls > 0);
    if (reason && !this.finished) {
      this.finished = true;
      yield this.chunk({}, reason);
    }
  }

  /** The one usage-only chunk after the finish, from the last usageMetadata seen. */
  usageChunk(): StreamChunk | undefined {
    if (!this.usage) return undefined;
    return chunkFromObject({ ...this.envelope(), choices: [] }, this.usage);
  }

  private chunk(delta: Delta, finishReason: ChatCompletionChunk['choices'][number]['finish_reason'] = null) {
    const withRole: Delta = this.roleSent ? delta : { role: 'assistant', ...delta };
    this.roleSent = true;
    return chunkFromObject({
      ...this.envelope(),
      choices: [{ index: 0, delta: withRole, finish_reason: finishReason }],
    });
  }

  private envelope(): Pick<ChatCompletionChunk, 'id' | 'object' | 'created' | 'model'> {
    return {
      id: this.id ?? `chatcmpl-${this.identity.requestId}`,
      object: 'chat.completion.chunk',
      created: this.identity.created,
      model: this.model ?? this.identity.model,
    };
  }
}
