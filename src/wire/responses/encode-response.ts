/** Builds Responses-API objects (the response, its output items and usage) from canonical answers. */
import { randomBytes } from 'node:crypto';
import type { ToolCall } from '../../canonical/chat-request.ts';
import type { ChatCompletion, FinishReason } from '../../canonical/chat-response.ts';
import type { Usage } from '../../canonical/usage.ts';
import type { ResponsesEcho } from './decode-responses-request.ts';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export function newItemId(prefix: 'resp' | 'msg' | 'fc'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

export function messageItem(
  id: string,
  text: string,
  status: 'in_progress' | 'completed',
): Record<string, unknown> {
  return {
    type: 'message',
    id,
    status,
    role: 'assistant',
    content: status === 'completed' ? [outputTextPart(text)] : [],
  };
}

export function outputTextPart(text: string): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function functionCallItem(
  id: string,
  call: Pick<ToolCall, 'id'> & { name: string; arguments: string },
  status: 'in_progress' | 'completed',
): Record<string, unknown> {
  return { type: 'function_call', id, call_id: call.id, name: call.name, arguments: call.arguments, status };
}

export function responsesUsage(usage: Usage | undefined): Record<string, unknown> | null {
  if (!usage) return null;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

/** `completed`, or `incomplete` with its reason when the answer was cut by the cap or a filter. */
export function statusOf(reason: FinishReason | null | undefined): {
  status: ResponseStatus;
  incomplete_details: { reason: string } | null;
} {
  if (reason === 'length')
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (reason === 'content_filter')
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export interface ResponseFrame {
  id: string;
  createdAt: number;
  echo: ResponsesEcho;
}

export function responseObject(
  frame: ResponseFrame,
  state: {
    status: ResponseStatus;
    incomplete_details?: { reason: string } | null;
    output: unknown[];
    usage?: Usage | undefined;
    error?: { code: string; message: string } | null;
  },
): Record<string, unknown> {
  const { echo } = frame;
  return {
    id: frame.id,
    object: 'response',
    created_at: frame.createdAt,
    status: state.status,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    model: echo.model,
    output: state.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: null,
    reasoning: echo.reasoning,
    store: false,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: 'disabled',
    usage: responsesUsage(state.usage),
    metadata: echo.metadata,
  };
}

export function encodeResponse(response: ChatCompletion, echo: ResponsesEcho): string {
  const choice = response.choices[0];
  const output: unknown[] = [];
  const text = choice?.message.content;
  if (typeof text === 'string' && text !== '') output.push(messageItem(newItemId('msg'), text, 'completed'));
  for (const call of choice?.message.tool_calls ?? []) {
    output.push(
      functionCallItem(
        newItemId('fc'),
        { id: call.id, name: call.function.name, arguments: call.function.arguments },
        'completed',
      ),
    );
  }
  const frame = { id: newItemId('resp'), createdAt: response.created, echo };
  return JSON.stringify(
    responseObject(frame, { ...statusOf(choice?.finish_reason), output, usage: response.usage }),
  );
}
