/**
 * A Gemini GenerateContentResponse → a canonical chat.completion: the first candidate's text (thought
 * parts as `reasoning_content`), functionCall parts as tool calls with invented ids, the finish reason
 * and usage. A prompt the provider blocked is a non-retryable 400; an answer without candidates otherwise
 * is a protocol error.
 */
import type { ToolCall } from '../../canonical/chat-request.ts';
import type { ChatCompletion, ChatCompletionMessage, FinishReason } from '../../canonical/chat-response.ts';
import type { Usage } from '../../canonical/usage.ts';
import { protocolError } from '../upstream-exchange.ts';
import { promptBlocked } from './gemini-errors.ts';
import { toolCallId } from './gemini-tool-call-ids.ts';
import type { GeminiCandidate, GeminiResponse, GeminiUsageMetadata } from './gemini-types.ts';

export interface ResponseIdentity {
  requestId: string;
  /** The deployment's model, when the answer names none. */
  model: string;
  /** Epoch seconds. */
  created: number;
}

export function fromGeminiResponse(value: unknown, identity: ResponseIdentity): ChatCompletion {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw protocolError('the upstream answer is not a Gemini response');
  const response = value as GeminiResponse;
  const candidate = firstCandidate(response);
  const message: ChatCompletionMessage = { role: 'assistant', content: null };
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const part of candidate.content?.parts ?? []) {
    if (typeof part.text === 'string') {
      if (part.thought === true) reasoning += part.text;
      else text += part.text;
    } else if (part.functionCall && typeof part.functionCall.name === 'string') {
      toolCalls.push({
        id: toolCallId(toolCalls.length, part.thoughtSignature),
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    }
  }
  if (text) message.content = text;
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const completion: ChatCompletion = {
    id: typeof response.responseId === 'string' ? response.responseId : `chatcmpl-${identity.requestId}`,
    object: 'chat.completion',
    created: identity.created,
    model: typeof response.modelVersion === 'string' ? response.modelVersion : identity.model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: finishReasonOf(candidate.finishReason, toolCalls.length > 0) ?? 'stop',
        logprobs: null,
      },
    ],
  };
  const usage = usageOf(response.usageMetadata);
  if (usage) completion.usage = usage;
  return completion;
}

/** The first candidate; a blocked prompt (no candidates, a blockReason) is refused, not retried. */
export function firstCandidate(response: GeminiResponse): GeminiCandidate {
  const candidate = Array.isArray(response.candidates) ? response.candidates[0] : undefined;
  if (candidate && typeof candidate === 'object') return candidate;
  const reason = response.promptFeedback?.blockReason;
  if (reason !== undefined) throw promptBlocked(reason);
  throw protocolError('the upstream answer has no candidates');
}

const filtered = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/** Gemini's finishReason in the chat-completions vocabulary; undefined while the candidate is unfinished. */
export function finishReasonOf(reason: unknown, calledTools: boolean): FinishReason | undefined {
  if (typeof reason !== 'string' || reason === '' || reason === 'FINISH_REASON_UNSPECIFIED') return undefined;
  if (reason === 'MAX_TOKENS') return 'length';
  if (filtered.has(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

/** usageMetadata as canonical usage: thinking tokens count as completion tokens, as OpenAI bills them. */
export function usageOf(metadata: GeminiUsageMetadata | undefined): Usage | undefined {
  if (metadata === null || typeof metadata !== 'object') return undefined;
  const prompt = count(metadata.promptTokenCount) ?? 0;
  const thoughts = count(metadata.thoughtsTokenCount);
  const completion = (count(metadata.candidatesTokenCount) ?? 0) + (thoughts ?? 0);
  const cached = count(metadata.cachedContentTokenCount);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: count(metadata.totalTokenCount) ?? prompt + completion,
    ...(cached !== undefined ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
    ...(thoughts !== undefined ? { completion_tokens_details: { reasoning_tokens: thoughts } } : {}),
  };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}
