/** Encodes canonical answers, usage and errors in the Anthropic Messages shapes. */
import type { ChatCompletion, FinishReason } from '../../canonical/chat-response.ts';
import type { Usage } from '../../canonical/usage.ts';
import type { GatewayError } from '../../lib/gateway-error.ts';

export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal' | 'stop_sequence';

export function stopReasonOf(reason: FinishReason | null | undefined): StopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Anthropic counts cached prompt tokens apart from `input_tokens`; the chat shape includes them. */
export function messagesUsage(usage: Usage | undefined): Record<string, number> {
  if (!usage) return { input_tokens: 0, output_tokens: 0 };
  const cacheRead = numberOr0(usage.prompt_tokens_details?.cached_tokens);
  const cacheCreation = numberOr0(usage.prompt_tokens_details?.cache_creation_tokens);
  return {
    input_tokens: Math.max(0, usage.prompt_tokens - cacheRead - cacheCreation),
    output_tokens: usage.completion_tokens,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheCreation,
  };
}

export function messageId(id: string): string {
  return id.startsWith('msg_') ? id : `msg_${id.replace(/^chatcmpl-/, '')}`;
}

/** The tool input object of a call's JSON arguments (an unparseable argument string becomes `{}`). */
export function toolInput(argumentsJson: string): unknown {
  try {
    const input = JSON.parse(argumentsJson) as unknown;
    return input !== null && typeof input === 'object' ? input : {};
  } catch {
    return {};
  }
}

export function encodeMessage(response: ChatCompletion, model: string): string {
  const choice = response.choices[0];
  const content: unknown[] = [];
  const reasoning = choice?.message.reasoning_content;
  if (typeof reasoning === 'string' && reasoning !== '')
    content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  const text = choice?.message.content;
  if (typeof text === 'string' && text !== '') content.push({ type: 'text', text });
  for (const call of choice?.message.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolInput(call.function.arguments),
    });
  }
  return JSON.stringify({
    id: messageId(response.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReasonOf(choice?.finish_reason),
    stop_sequence: null,
    usage: messagesUsage(response.usage),
  });
}

const errorTypes: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  529: 'overloaded_error',
};

/** The Anthropic error body; our stable code stays readable in the message. */
export function messagesErrorBody(error: GatewayError, requestId?: string): Record<string, unknown> {
  const type =
    errorTypes[error.status] ??
    (error.status >= 400 && error.status < 500 ? 'invalid_request_error' : 'api_error');
  return {
    type: 'error',
    error: { type, message: `${error.message} (${error.code})` },
    ...(requestId ? { request_id: requestId } : {}),
  };
}

function numberOr0(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
