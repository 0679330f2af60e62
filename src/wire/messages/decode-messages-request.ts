/**
 * Decodes an Anthropic Messages body into the canonical chat request: `system` becomes a system
 * message, content blocks become chat content parts, `tool_use` blocks assistant tool calls and
 * `tool_result` blocks tool messages; tools, tool choice and generation settings carry over. Problems
 * are a 400 naming the field as the caller wrote it (`messages[1].content[0].type`). Messages fields
 * chat has no words for are carried over under their own names (an Anthropic deployment reads them
 * from the native body); a field the Messages API does not have is refused, never dropped (issue 25).
 */
import {
  type ChatMessage,
  type ChatRequest,
  type ContentPart,
  nativeBody,
  type ToolCall,
} from '../../canonical/chat-request.ts';
import { errors } from '../../lib/error-catalogue.ts';

type Json = Record<string, unknown>;

/** Fields the translation reads. */
const TRANSLATED = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'metadata',
  'tools',
  'tool_choice',
  'thinking',
]);

/** Messages API fields without a chat counterpart: carried over as written, for the upstream to decide. */
const CARRIED = new Set([
  'service_tier',
  'container',
  'mcp_servers',
  'context_management',
  'output_config',
  'output_format',
  'inference_geo',
]);

/** Names from the OpenAI APIs, with the Messages field that does the same. */
const RENAMED: Readonly<Record<string, string>> = {
  max_completion_tokens: 'max_tokens',
  max_output_tokens: 'max_tokens',
  stop: 'stop_sequences',
  response_format: 'output_format',
  user: 'metadata.user_id',
};

export function decodeMessagesRequest(body: unknown): ChatRequest {
  if (!isObject(body))
    throw errors.invalidRequest('The body must be a JSON object with model, max_tokens and messages.');
  const carried = carriedFields(body);
  if (typeof body.model !== 'string' || body.model.length === 0)
    throw errors.invalidRequest(
      'model: must be a non-empty string naming a model from GET /v1/models.',
      'model',
    );
  if (!(Number.isInteger(body.max_tokens) && (body.max_tokens as number) >= 1))
    throw errors.invalidRequest('max_tokens: is required and must be a positive integer.', 'max_tokens');
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw errors.invalidRequest('messages: must be a non-empty list of messages.', 'messages');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    throw errors.invalidRequest('stream: must be true or false.', 'stream');
  const messages: ChatMessage[] = [];
  const system = systemText(body.system);
  if (system !== undefined) messages.push({ role: 'system', content: system });
  body.messages.forEach((message, index) => {
    messages.push(...decodeMessage(message, `messages[${index}]`));
  });
  const request: ChatRequest = {
    model: body.model,
    messages,
    max_tokens: body.max_tokens as number,
    ...carried,
  };
  if (body.stream === true) request.stream = true;
  copySettings(body, request);
  if (body.tools !== undefined) request.tools = decodeTools(body.tools);
  if (body.tool_choice !== undefined) Object.assign(request, decodeToolChoice(body.tool_choice));
  // Checked above, so an Anthropic deployment may take the caller's body as it is.
  request[nativeBody] = { format: 'anthropic-messages', body };
  return request;
}

/** The untranslated Messages fields to carry over; a field the Messages API lacks is a 400 naming it. */
function carriedFields(body: Json): Json {
  const carried: Json = {};
  for (const [name, value] of Object.entries(body)) {
    if (TRANSLATED.has(name) || value === undefined) continue;
    if (CARRIED.has(name)) {
      if (value !== null) carried[name] = value;
      continue;
    }
    const instead = RENAMED[name];
    throw errors.invalidRequest(
      instead
        ? `${name}: is not a Messages API field; use ${instead} on /v1/messages.`
        : `${name}: is not a field of the Messages API this gateway knows; remove it (unknown fields are refused rather than ignored).`,
      name,
    );
  }
  return carried;
}

function systemText(system: unknown): string | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === 'string') return system;
  if (
    Array.isArray(system) &&
    system.every((block) => isObject(block) && block.type === 'text' && typeof block.text === 'string')
  )
    return system.map((block) => (block as Json).text as string).join('\n');
  throw errors.invalidRequest('system: must be a string or a list of text blocks.', 'system');
}

function decodeMessage(raw: unknown, path: string): ChatMessage[] {
  if (!isObject(raw) || (raw.role !== 'user' && raw.role !== 'assistant'))
    throw errors.invalidRequest(`${path}.role: must be user or assistant.`, `${path}.role`);
  const role = raw.role;
  if (typeof raw.content === 'string') return [{ role, content: raw.content }];
  if (!Array.isArray(raw.content))
    throw errors.invalidRequest(
      `${path}.content: must be a string or a list of content blocks.`,
      `${path}.content`,
    );
  const parts: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  const toolResults: ChatMessage[] = [];
  raw.content.forEach((block, index) => {
    const at = `${path}.content[${index}]`;
    if (!isObject(block) || typeof block.type !== 'string')
      throw errors.invalidRequest(`${at}: must be a content block with a type.`, `${at}.type`);
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: requireString(block.text, `${at}.text`) });
        return;
      case 'image':
        parts.push(imagePart(block.source, `${at}.source`));
        return;
      case 'thinking':
      case 'redacted_thinking':
        return; // Reasoning of earlier turns is meaningful only to the model that wrote it.
      case 'tool_use':
        if (role !== 'assistant') break;
        toolCalls.push({
          id: requireString(block.id, `${at}.id`),
          type: 'function',
          function: {
            name: requireString(block.name, `${at}.name`),
            arguments: JSON.stringify(block.input ?? {}),
          },
        });
        return;
      case 'tool_result':
        if (role !== 'user') break;
        toolResults.push({
          role: 'tool',
          tool_call_id: requireString(block.tool_use_id, `${at}.tool_use_id`),
          content: toolResultText(block, at),
        });
        return;
    }
    throw errors.invalidRequest(
      `${at}.type: '${block.type}' blocks are not supported in ${role} messages (text, image, thinking, ${role === 'user' ? 'tool_result' : 'tool_use'}).`,
      `${at}.type`,
    );
  });
  if (role === 'assistant') {
    const text = parts.map((part) => (part as { text?: string }).text ?? '').join('');
    const message: ChatMessage = { role, content: toolCalls.length > 0 && text === '' ? null : text };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return [message];
  }
  // Tool results answer the preceding assistant turn, so they come before the user's own words.
  return parts.length > 0 ? [...toolResults, { role, content: parts }] : toolResults;
}

function imagePart(source: unknown, path: string): ContentPart {
  if (
    isObject(source) &&
    source.type === 'base64' &&
    typeof source.media_type === 'string' &&
    typeof source.data === 'string'
  )
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (isObject(source) && source.type === 'url' && typeof source.url === 'string')
    return { type: 'image_url', image_url: { url: source.url } };
  throw errors.invalidRequest(`${path}: must be a base64 source (media_type, data) or a url source.`, path);
}

function toolResultText(block: Json, path: string): string {
  const content = block.content;
  let text: string;
  if (content === undefined) text = '';
  else if (typeof content === 'string') text = content;
  else if (Array.isArray(content) && content.every((part) => isObject(part) && part.type === 'text'))
    text = content.map((part) => String((part as Json).text ?? '')).join('\n');
  else
    throw errors.invalidRequest(
      `${path}.content: must be a string or a list of text blocks.`,
      `${path}.content`,
    );
  return block.is_error === true ? `Error: ${text}` : text;
}

function decodeTools(tools: unknown): NonNullable<ChatRequest['tools']> {
  if (!Array.isArray(tools)) throw errors.invalidRequest('tools: must be a list of tools.', 'tools');
  return tools.map((tool, index) => {
    const at = `tools[${index}]`;
    if (
      !isObject(tool) ||
      typeof tool.name !== 'string' ||
      (tool.type !== undefined && tool.type !== 'custom')
    )
      throw errors.invalidRequest(`${at}: only client tools with a name and input_schema are supported.`, at);
    if (!isObject(tool.input_schema))
      throw errors.invalidRequest(`${at}.input_schema: must be a JSON schema object.`, `${at}.input_schema`);
    return {
      type: 'function' as const,
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        parameters: tool.input_schema,
      },
    };
  });
}

function decodeToolChoice(choice: unknown): Json {
  if (!isObject(choice))
    throw errors.invalidRequest('tool_choice: must be an object with a type.', 'tool_choice');
  const parallel = choice.disable_parallel_tool_use === true ? { parallel_tool_calls: false } : {};
  switch (choice.type) {
    case 'auto':
      return { tool_choice: 'auto', ...parallel };
    case 'any':
      return { tool_choice: 'required', ...parallel };
    case 'none':
      return { tool_choice: 'none' };
    case 'tool':
      return {
        tool_choice: { type: 'function', function: { name: requireString(choice.name, 'tool_choice.name') } },
        ...parallel,
      };
  }
  throw errors.invalidRequest('tool_choice.type: must be auto, any, tool or none.', 'tool_choice.type');
}

function copySettings(body: Json, request: ChatRequest): void {
  for (const name of ['temperature', 'top_p', 'top_k'] as const) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw errors.invalidRequest(`${name}: must be a number.`, name);
    request[name] = value;
  }
  if (body.stop_sequences !== undefined) {
    if (!Array.isArray(body.stop_sequences) || !body.stop_sequences.every((stop) => typeof stop === 'string'))
      throw errors.invalidRequest('stop_sequences: must be a list of strings.', 'stop_sequences');
    request.stop = body.stop_sequences;
  }
  const userId = isObject(body.metadata) ? body.metadata.user_id : undefined;
  if (typeof userId === 'string') request.user = userId;
  const effort = reasoningEffort(body.thinking);
  if (effort) request.reasoning_effort = effort;
}

/**
 * Extended thinking as chat's `reasoning_effort`, for providers other than Anthropic (an Anthropic
 * deployment takes the caller's body as it is). The budget maps as LiteLLM maps the other way
 * (low 1024, medium 2048, high 4096 tokens); disabled thinking asks for nothing.
 */
function reasoningEffort(thinking: unknown): 'low' | 'medium' | 'high' | undefined {
  if (thinking === undefined || thinking === null) return undefined;
  if (isObject(thinking) && thinking.type === 'disabled') return undefined;
  const budget = isObject(thinking) ? thinking.budget_tokens : undefined;
  if (
    !isObject(thinking) ||
    thinking.type !== 'enabled' ||
    !Number.isInteger(budget) ||
    (budget as number) < 1
  )
    throw errors.invalidRequest(
      "thinking: must be {type: 'enabled', budget_tokens: <positive integer>} or {type: 'disabled'}.",
      'thinking',
    );
  const tokens = budget as number;
  return tokens <= 1024 ? 'low' : tokens <= 2048 ? 'medium' : 'high';
}

function requireString(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw errors.invalidRequest(`${path}: must be a non-empty string.`, path);
  return value;
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
