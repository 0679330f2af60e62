/**
 * Translates a Bedrock Converse answer to a canonical chat.completion: text, reasoning and toolUse
 * blocks, the stop reason, and token usage with prompt-cache counts.
 */
import type { ToolCall } from '../../canonical/chat-request.ts';
import type { ChatCompletion, ChatCompletionMessage, FinishReason } from '../../canonical/chat-response.ts';
import { isCount, type Usage } from '../../canonical/usage.ts';

export interface ConverseAnswer {
  output: { message: { role?: string; content: Array<Record<string, unknown>> } };
  stopReason: string;
  usage?: unknown;
}

export interface AnswerMeta {
  id: string;
  created: number;
  model: string;
  /** The forced structured-output tool, whose input is the answer text. */
  jsonToolName: string | undefined;
}

export function isConverseAnswer(value: unknown): value is ConverseAnswer {
  const record = value as { output?: { message?: { content?: unknown } }; stopReason?: unknown } | null;
  return (
    record !== null &&
    typeof record === 'object' &&
    Array.isArray(record.output?.message?.content) &&
    typeof record.stopReason === 'string'
  );
}

export function fromConverseResponse(answer: ConverseAnswer, meta: AnswerMeta): ChatCompletion {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  let structured = false;
  for (const block of answer.output.message.content) {
    if (typeof block.text === 'string') texts.push(block.text);
    const thought = (block.reasoningContent as { reasoningText?: { text?: unknown } } | undefined)
      ?.reasoningText?.text;
    if (typeof thought === 'string') reasoning.push(thought);
    const use = block.toolUse as { toolUseId?: unknown; name?: unknown; input?: unknown } | undefined;
    if (!use || typeof use.name !== 'string') continue;
    if (use.name === meta.jsonToolName) {
      texts.push(JSON.stringify(use.input ?? {}));
      structured = true;
      continue;
    }
    toolCalls.push({
      id: typeof use.toolUseId === 'string' ? use.toolUseId : `call_${toolCalls.length}`,
      type: 'function',
      function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) },
    });
  }
  const message: ChatCompletionMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : toolCalls.length > 0 ? null : '',
  };
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('');
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const usage = usageFromConverse(answer.usage);
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: structured && toolCalls.length === 0 ? 'stop' : finishReasonOf(answer.stopReason),
        logprobs: null,
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

/** Bedrock's stopReason as a chat-completions finish_reason. */
export function finishReasonOf(stopReason: unknown): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Bedrock TokenUsage as canonical usage: cache reads and writes are prompt tokens too. */
export function usageFromConverse(value: unknown): Usage | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  const input = record.inputTokens;
  const output = record.outputTokens;
  if (!isCount(input) || !isCount(output)) return undefined;
  const cacheRead = isCount(record.cacheReadInputTokens) ? record.cacheReadInputTokens : undefined;
  const cacheWrite = isCount(record.cacheWriteInputTokens) ? record.cacheWriteInputTokens : undefined;
  const prompt = input + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output };
  if (cacheRead !== undefined || cacheWrite !== undefined) {
    usage.prompt_tokens_details = {
      cached_tokens: cacheRead ?? 0,
      ...(cacheWrite !== undefined ? { cache_creation_tokens: cacheWrite } : {}),
    };
  }
  return usage;
}
