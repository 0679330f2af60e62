/**
 * An Anthropic Message → a canonical chat completion: text blocks as content, tool_use blocks as tool
 * calls (or as the JSON content of a forced structured-output tool), thinking as reasoning_content,
 * stop_reason as finish_reason and usage with prompt caching counted into prompt_tokens.
 */
import type { ToolCall } from '../../canonical/chat-request.ts';
import type { ChatCompletion, ChatCompletionMessage, FinishReason } from '../../canonical/chat-response.ts';
import { isCount, type Usage } from '../../canonical/usage.ts';

/** The parts of a Message this adapter reads; the rest is kept only by the native path. */
export interface AnthropicMessage {
  id: string;
  type: 'message';
  model?: string;
  content: Array<Record<string, unknown>>;
  stop_reason?: string | null;
  usage?: unknown;
  [key: string]: unknown;
}

export function isMessage(value: unknown): value is AnthropicMessage {
  if (value === null || typeof value !== 'object') return false;
  const message = value as Record<string, unknown>;
  return message.type === 'message' && typeof message.id === 'string' && Array.isArray(message.content);
}

/** end_turn, stop_sequence and pause_turn stop; max_tokens is length; refusal is content_filter. */
export function finishReasonOf(stopReason: unknown, structuredOutput: boolean): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return structuredOutput ? 'stop' : 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/**
 * Anthropic usage → canonical usage. input_tokens excludes cached input, so prompt_tokens adds the
 * cache reads and writes back (as OpenAI counts cached tokens inside prompt_tokens).
 */
export function messagesUsage(value: unknown): Usage | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const usage = value as Record<string, unknown>;
  if (!isCount(usage.input_tokens) || !isCount(usage.output_tokens)) return undefined;
  const cacheRead = isCount(usage.cache_read_input_tokens) ? usage.cache_read_input_tokens : undefined;
  const cacheCreation = isCount(usage.cache_creation_input_tokens)
    ? usage.cache_creation_input_tokens
    : undefined;
  const prompt = usage.input_tokens + (cacheRead ?? 0) + (cacheCreation ?? 0);
  const result: Usage = {
    prompt_tokens: prompt,
    completion_tokens: usage.output_tokens,
    total_tokens: prompt + usage.output_tokens,
  };
  if (cacheRead !== undefined || cacheCreation !== undefined) {
    result.prompt_tokens_details = {
      cached_tokens: cacheRead ?? 0,
      cache_creation_tokens: cacheCreation ?? 0,
    };
  }
  return result;
}

export function fromMessagesResponse(
  message: AnthropicMessage,
  fallbackModel: string,
  jsonTool: string | undefined,
  createdSeconds: number,
): ChatCompletion {
  const text: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  let structured = false;
  for (const block of message.content) {
    if (block.type === 'text' && typeof block.text === 'string') text.push(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string') reasoning.push(block.thinking);
    else if (block.type === 'tool_use' && typeof block.name === 'string') {
      const input = JSON.stringify(block.input ?? {});
      if (jsonTool !== undefined && block.name === jsonTool) {
        text.push(input);
        structured = true;
      } else {
        toolCalls.push({
          id: String(block.id ?? ''),
          type: 'function',
          function: { name: block.name, arguments: input },
        });
      }
    }
  }
  const content = text.join('');
  const assistant: ChatCompletionMessage = {
    role: 'assistant',
    content: content === '' && toolCalls.length > 0 ? null : content,
  };
  if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
  if (reasoning.length > 0) assistant.reasoning_content = reasoning.join('');
  const usage = messagesUsage(message.usage);
  return {
    id: message.id,
    object: 'chat.completion',
    created: createdSeconds,
    model: typeof message.model === 'string' ? message.model : fallbackModel,
    choices: [
      {
        index: 0,
        message: assistant,
        finish_reason: finishReasonOf(message.stop_reason, structured && toolCalls.length === 0),
        logprobs: null,
      },
    ],
    ...(usage ? { usage } : {}),
  };
}
