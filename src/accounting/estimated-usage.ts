/**
 * The usage the gateway charges, marked estimated, when a provider call's own report never came (the
 * caller left a stream and the drain ended without it; a tool-loop turn stopped at the drain's end) or
 * could not be read (docs/limits.md, "Estimates for cut streams"). It undercounts hidden reasoning
 * tokens and never charges more than the request allowed the model to write.
 */
import type { ChatCompletion } from '../canonical/chat-response.ts';
import type { Usage } from '../canonical/usage.ts';

export interface UsageEstimateInput {
  /** Bytes of the serialized request body: the prompt is estimated as admission does (bytes / 4). */
  bodyBytes: number;
  /** Completion tokens seen: chunks read from the upstream, or the answer's text (answerTokens). */
  completionTokens: number;
  /** The request's max_tokens or max_completion_tokens, when set: the completion is at most that. */
  maxTokens: unknown;
}

export function estimatedUsage(input: UsageEstimateInput): Usage {
  const prompt = Math.ceil(Math.max(0, input.bodyBytes) / 4);
  const cap =
    typeof input.maxTokens === 'number' && Number.isInteger(input.maxTokens) && input.maxTokens > 0
      ? input.maxTokens
      : Number.POSITIVE_INFINITY;
  const completion = Math.min(Math.max(0, input.completionTokens), cap);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** A JSON answer's completion as text tokens: its content, refusals and tool-call arguments, 4 characters each. */
export function answerTokens(response: ChatCompletion): number {
  let characters = 0;
  for (const choice of Array.isArray(response.choices) ? response.choices : []) {
    const message = choice?.message;
    if (!message) continue;
    if (typeof message.content === 'string') characters += message.content.length;
    if (typeof message.refusal === 'string') characters += message.refusal.length;
    for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : [])
      characters +=
        String(call?.function?.arguments ?? '').length + String(call?.function?.name ?? '').length;
  }
  return Math.ceil(characters / 4);
}

/** The request's output cap: max_completion_tokens, else max_tokens. */
export function maxTokensOf(request: { max_tokens?: unknown; max_completion_tokens?: unknown }): unknown {
  return request.max_completion_tokens ?? request.max_tokens;
}
