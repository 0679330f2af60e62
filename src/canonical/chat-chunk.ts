/**
 * The canonical streaming unit: a chat.completion.chunk. Adapters hand them over as `StreamChunk`s that
 * carry the serialized JSON when they already have it, so an OpenAI-shaped caller gets the upstream's
 * bytes without a parse and re-serialize, and the parsed object only when a stage needs it.
 */
import type { FinishReason } from './chat-response.ts';
import type { Usage } from './usage.ts';

export interface ChunkToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      refusal?: string | null;
      tool_calls?: ChunkToolCallDelta[];
    };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
  }>;
  usage?: Usage | null;
  [key: string]: unknown;
}

export interface StreamChunk {
  /** The chunk as JSON text, exactly as it goes on the chat-completions wire. */
  readonly json: string;
  /** The parsed chunk; parsing happens on first access. */
  readonly chunk: ChatCompletionChunk;
  /** Usage carried by this chunk, when it carries any (the final usage chunk). */
  readonly usage: Usage | undefined;
  /** True for a usage-only chunk (no choices) that exists only because the gateway asked for usage. */
  readonly usageOnly: boolean;
  /**
   * For a request that went upstream in its native format (see `nativeBody`): the upstream's events
   * that led to this chunk, as SSE text, so the caller's encoder can pass them through untouched. The
   * stream's terminal event is never included: encoders write it after accounting.
   */
  native?: string;
}

/** A StreamChunk built from a chunk object (non-OpenAI upstreams and the fake provider). */
export function chunkFromObject(chunk: ChatCompletionChunk, usage?: Usage): StreamChunk {
  // The usage goes on the wire too: a chat caller that asked for it reads it from the chunk's JSON.
  if (usage !== undefined && chunk.usage === undefined) chunk.usage = usage;
  let json: string | undefined;
  return {
    get json() {
      json ??= JSON.stringify(chunk);
      return json;
    },
    chunk,
    usage,
    usageOnly: usage !== undefined && chunk.choices.length === 0,
  };
}
