/**
 * A canonical chat request → an Anthropic Messages request body: turns and system text, max_tokens
 * (required upstream), sampling and stop settings with the deployment's defaults under the caller's,
 * tools and tool_choice, `user` as metadata, and a json_schema response_format as a forced tool.
 */
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { DEFAULT_MAX_TOKENS } from './anthropic-settings.ts';
import { toConversation } from './to-messages-turns.ts';

/** The tool a json_schema response_format is sent as; its `tool_use` answer is the JSON content. */
export const JSON_OUTPUT_TOOL = 'json_output';

export interface MessagesRequest {
  body: Record<string, unknown>;
  /** Set when the answer's `tool_use` of this tool is structured output, not a tool call. */
  jsonTool: string | undefined;
}

export function toMessagesRequest(
  request: ChatRequest,
  model: string,
  defaults: Readonly<Record<string, unknown>>,
  stream: boolean,
): MessagesRequest {
  const { system, turns } = toConversation(request.messages);
  const body: Record<string, unknown> = {
    model,
    max_tokens: maxTokens(request, defaults),
    messages: turns,
  };
  if (system !== undefined) body.system = system;
  for (const name of ['temperature', 'top_p', 'top_k'] as const) {
    const value = request[name] ?? defaults[name];
    if (typeof value === 'number') body[name] = value;
  }
  const stop = stopSequences(request.stop ?? defaults.stop);
  if (stop) body.stop_sequences = stop;
  if (typeof request.user === 'string' && request.user) body.metadata = { user_id: request.user };
  const tools = functionTools(request.tools);
  if (tools.length > 0) body.tools = tools;
  const toolChoice = toToolChoice(request.tool_choice, request.parallel_tool_calls);
  if (toolChoice && tools.length > 0) body.tool_choice = toolChoice;
  const jsonTool = addJsonOutputTool(body, request.response_format);
  if (stream) body.stream = true;
  return { body, jsonTool };
}

/** The caller's max_tokens or max_completion_tokens, else the deployment's, else DEFAULT_MAX_TOKENS. */
function maxTokens(request: ChatRequest, defaults: Readonly<Record<string, unknown>>): number {
  for (const value of [request.max_tokens, request.max_completion_tokens, defaults.max_tokens]) {
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return DEFAULT_MAX_TOKENS;
}

function stopSequences(stop: unknown): string[] | undefined {
  if (typeof stop === 'string') return stop ? [stop] : undefined;
  if (!Array.isArray(stop)) return undefined;
  const sequences = stop.filter((item): item is string => typeof item === 'string' && item.length > 0);
  return sequences.length > 0 ? sequences : undefined;
}

function functionTools(tools: ChatRequest['tools']): Record<string, unknown>[] {
  const result: Record<string, unknown>[] = [];
  for (const tool of tools ?? []) {
    if (tool.type !== 'function') continue;
    const definition = tool.function as { name?: unknown; description?: unknown; parameters?: unknown };
    if (typeof definition?.name !== 'string') continue;
    result.push({
      name: definition.name,
      ...(typeof definition.description === 'string' ? { description: definition.description } : {}),
      input_schema: definition.parameters ?? { type: 'object', properties: {} },
    });
  }
  return result;
}

/** auto/none/required/{function} → auto/none/any/{tool}; parallel_tool_calls false disables parallel use. */
function toToolChoice(choice: unknown, parallel: unknown): Record<string, unknown> | undefined {
  let result: Record<string, unknown> | undefined;
  if (choice === 'auto' || choice === 'none') result = { type: choice };
  else if (choice === 'required') result = { type: 'any' };
  else if (choice !== null && typeof choice === 'object') {
    const name = (choice as { function?: { name?: unknown } }).function?.name;
    if (typeof name === 'string') result = { type: 'tool', name };
  }
  if (parallel === false && result?.type !== 'none')
    result = { type: 'auto', ...result, disable_parallel_tool_use: true };
  return result;
}

/**
 * `response_format: {type: 'json_schema'}` is sent as a tool whose input schema is the schema, with
 * tool_choice forcing it (as LiteLLM does); `json_object` has no schema and is left out.
 */
function addJsonOutputTool(body: Record<string, unknown>, format: unknown): string | undefined {
  if (format === null || typeof format !== 'object') return undefined;
  const { type, json_schema: jsonSchema } = format as { type?: unknown; json_schema?: { schema?: unknown } };
  if (type !== 'json_schema' || jsonSchema?.schema === undefined) return undefined;
  const tools = (body.tools as Record<string, unknown>[] | undefined) ?? [];
  tools.push({
    name: JSON_OUTPUT_TOOL,
    description: 'Answer with JSON that matches this schema.',
    input_schema: jsonSchema.schema,
  });
  body.tools = tools;
  body.tool_choice = { type: 'tool', name: JSON_OUTPUT_TOOL };
  return JSON_OUTPUT_TOOL;
}
