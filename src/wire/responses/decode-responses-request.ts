/**
 * Decodes an OpenAI Responses body (the stateless subset) into the canonical chat request: `input` items
 * become chat messages (`function_call` items assistant tool calls, `function_call_output` items tool
 * messages), `instructions` a system message, `text.format` the response format, `max_output_tokens`
 * the output cap. Stored state (`previous_response_id`, `store: true`) is refused: the gateway keeps none.
 * Every other field is carried over, accepted at a neutral value or refused by name (responses-fields.ts).
 */
import type { ChatMessage, ChatRequest, ContentPart, ToolCall } from '../../canonical/chat-request.ts';
import { errors } from '../../lib/error-catalogue.ts';
import { decodeResponsesTools } from './decode-responses-tools.ts';
import { checkNestedSettings, checkResponsesFields } from './responses-fields.ts';

type Json = Record<string, unknown>;

/** The request settings a Responses answer repeats back to the caller. */
export interface ResponsesEcho {
  model: string;
  instructions: unknown;
  max_output_tokens: unknown;
  metadata: unknown;
  parallel_tool_calls: unknown;
  temperature: unknown;
  top_p: unknown;
  text: unknown;
  tool_choice: unknown;
  tools: unknown;
  reasoning: unknown;
}

export interface DecodedResponsesRequest {
  request: ChatRequest;
  echo: ResponsesEcho;
}

const STATEFUL: ReadonlyArray<readonly [name: string, refused: (value: unknown) => boolean, why: string]> = [
  [
    'previous_response_id',
    (value) => value !== undefined && value !== null,
    'send the whole conversation in input',
  ],
  ['store', (value) => value === true, 'send store: false (or leave it out)'],
  ['background', (value) => value === true, 'send background: false'],
  ['conversation', (value) => value !== undefined && value !== null, 'send the whole conversation in input'],
  ['prompt', (value) => value !== undefined && value !== null, 'send the prompt text in input'],
];

export function decodeResponsesRequest(body: unknown): DecodedResponsesRequest {
  if (!isObject(body)) throw errors.invalidRequest('The body must be a JSON object with model and input.');
  if (typeof body.model !== 'string' || body.model.length === 0)
    throw errors.invalidRequest(
      'model: must be a non-empty string naming a model from GET /v1/models.',
      'model',
    );
  for (const [name, refused, why] of STATEFUL) {
    if (refused(body[name]))
      throw errors.invalidRequest(
        `${name}: this gateway is stateless and stores no responses or conversations; ${why}.`,
        name,
      );
  }
  const carried = checkResponsesFields(body);
  checkNestedSettings(body);
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    throw errors.invalidRequest('stream: must be true or false.', 'stream');
  const maxOutput = body.max_output_tokens;
  if (maxOutput != null && !(Number.isInteger(maxOutput) && (maxOutput as number) >= 1))
    throw errors.invalidRequest('max_output_tokens: must be a positive integer.', 'max_output_tokens');
  const messages: ChatMessage[] = [];
  if (body.instructions != null) {
    if (typeof body.instructions !== 'string')
      throw errors.invalidRequest('instructions: must be a string.', 'instructions');
    messages.push({ role: 'system', content: body.instructions });
  }
  messages.push(...decodeInput(body.input));
  const request: ChatRequest = { model: body.model, messages, ...carried };
  if (body.stream === true) request.stream = true;
  if (maxOutput != null) request.max_tokens = maxOutput as number;
  copySettings(body, request);
  Object.assign(request, decodeResponsesTools(body.tools, body.tool_choice));
  return {
    request,
    echo: {
      model: body.model,
      instructions: body.instructions ?? null,
      max_output_tokens: maxOutput ?? null,
      metadata: body.metadata ?? {},
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      temperature: body.temperature ?? null,
      top_p: body.top_p ?? null,
      text: body.text ?? { format: { type: 'text' } },
      tool_choice: body.tool_choice ?? 'auto',
      tools: body.tools ?? [],
      reasoning: body.reasoning ?? null,
    },
  };
}

function decodeInput(input: unknown): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input) || input.length === 0)
    throw errors.invalidRequest('input: must be a string or a non-empty list of input items.', 'input');
  const messages: ChatMessage[] = [];
  input.forEach((item, index) => {
    const at = `input[${index}]`;
    if (!isObject(item)) throw errors.invalidRequest(`${at}: must be an input item object.`, at);
    const type = item.type ?? 'message';
    if (type === 'message') messages.push(decodeMessageItem(item, at));
    else if (type === 'function_call') addToolCall(messages, item, at);
    else if (type === 'function_call_output') {
      messages.push({
        role: 'tool',
        tool_call_id: requireString(item.call_id, `${at}.call_id`),
        content: outputText(item.output, `${at}.output`),
      });
    } else if (type === 'item_reference') {
      // Clients that assume a stored conversation refer to earlier output items by id (the Vercel AI
      // SDK does unless `providerOptions.openai.store` is false); the gateway keeps none to look up.
      throw errors.invalidRequest(
        `${at}.type: item references need stored responses, which this stateless gateway does not keep; send the items themselves (with the Vercel AI SDK: providerOptions: { openai: { store: false } }).`,
        `${at}.type`,
      );
    } else if (type !== 'reasoning') {
      throw errors.invalidRequest(
        `${at}.type: '${String(type)}' items are not supported (message, function_call, function_call_output, reasoning).`,
        `${at}.type`,
      );
    }
  });
  return messages;
}

function decodeMessageItem(item: Json, at: string): ChatMessage {
  const role = item.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer')
    throw errors.invalidRequest(`${at}.role: must be user, assistant, system or developer.`, `${at}.role`);
  if (typeof item.content === 'string') return { role, content: item.content };
  if (!Array.isArray(item.content))
    throw errors.invalidRequest(
      `${at}.content: must be a string or a list of content parts.`,
      `${at}.content`,
    );
  const parts = item.content.map((part, index) => contentPart(part, `${at}.content[${index}]`));
  if (role !== 'user')
    return { role, content: parts.map((part) => (part as { text?: string }).text ?? '').join('') };
  return { role, content: parts };
}

function contentPart(part: unknown, at: string): ContentPart {
  if (!isObject(part)) throw errors.invalidRequest(`${at}: must be a content part object.`, at);
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: requireText(part.text, `${at}.text`) };
    case 'refusal':
      return { type: 'text', text: requireText(part.refusal, `${at}.refusal`) };
    case 'input_image':
      if (typeof part.image_url === 'string' && part.image_url.length > 0)
        return {
          type: 'image_url',
          image_url: {
            url: part.image_url,
            ...(typeof part.detail === 'string' ? { detail: part.detail } : {}),
          },
        };
      throw errors.invalidRequest(
        `${at}.image_url: must be an image URL or data URL (file ids are not supported).`,
        `${at}.image_url`,
      );
  }
  throw errors.invalidRequest(
    `${at}.type: '${String(part.type)}' parts are not supported (input_text, input_image, output_text, refusal).`,
    `${at}.type`,
  );
}

/** Consecutive function calls (and the assistant text before them) form one assistant turn. */
function addToolCall(messages: ChatMessage[], item: Json, at: string): void {
  const call: ToolCall = {
    id: requireString(item.call_id, `${at}.call_id`),
    type: 'function',
    function: {
      name: requireString(item.name, `${at}.name`),
      arguments: requireText(item.arguments, `${at}.arguments`),
    },
  };
  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    last.tool_calls = [...(last.tool_calls ?? []), call];
    if (last.content === '') last.content = null;
  } else {
    messages.push({ role: 'assistant', content: null, tool_calls: [call] });
  }
}

function outputText(output: unknown, at: string): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output))
    return output
      .map((part, index) => requireText(isObject(part) ? part.text : undefined, `${at}[${index}].text`))
      .join('');
  throw errors.invalidRequest(`${at}: must be a string or a list of text parts.`, at);
}

function copySettings(body: Json, request: ChatRequest): void {
  for (const name of ['temperature', 'top_p'] as const) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw errors.invalidRequest(`${name}: must be a number.`, name);
    request[name] = value;
  }
  const typed = [
    ['parallel_tool_calls', 'boolean', 'true or false'],
    ['user', 'string', 'a string'],
    ['metadata', 'object', 'an object of strings'],
  ] as const;
  for (const [name, type, what] of typed) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== type || Array.isArray(value))
      throw errors.invalidRequest(`${name}: must be ${what}.`, name);
  }
  if (typeof body.parallel_tool_calls === 'boolean') request.parallel_tool_calls = body.parallel_tool_calls;
  if (typeof body.user === 'string') request.user = body.user;
  copyNested(body, request);
  copyResponseFormat(body, request);
}

/** `text.format` is chat's `response_format`. */
function copyResponseFormat(body: Json, request: ChatRequest): void {
  const format = isObject(body.text) ? body.text.format : undefined;
  if (format === undefined || format === null) return;
  if (!isObject(format))
    throw errors.invalidRequest('text.format: must be an object with a type.', 'text.format');
  if (format.type === 'json_schema') {
    if (!isObject(format.schema))
      throw errors.invalidRequest('text.format.schema: must be a JSON schema object.', 'text.format.schema');
    request.response_format = {
      type: 'json_schema',
      json_schema: {
        name: typeof format.name === 'string' ? format.name : 'response',
        schema: format.schema,
        ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}),
        ...(typeof format.description === 'string' ? { description: format.description } : {}),
      },
    };
  } else if (format.type === 'json_object') request.response_format = { type: 'json_object' };
  else if (format.type !== 'text')
    throw errors.invalidRequest(
      'text.format.type: must be text, json_schema or json_object.',
      'text.format.type',
    );
}

/** `reasoning.effort` and `text.verbosity` are chat's `reasoning_effort` and `verbosity`. */
function copyNested(body: Json, request: ChatRequest): void {
  const pairs = [
    ['reasoning', 'effort', 'reasoning_effort'],
    ['text', 'verbosity', 'verbosity'],
  ] as const;
  for (const [parent, key, chatName] of pairs) {
    const value = isObject(body[parent]) ? (body[parent] as Json)[key] : undefined;
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string')
      throw errors.invalidRequest(`${parent}.${key}: must be a string such as "low".`, `${parent}.${key}`);
    request[chatName] = value;
  }
}

function requireString(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw errors.invalidRequest(`${path}: must be a non-empty string.`, path);
  return value;
}

function requireText(value: unknown, path: string): string {
  if (typeof value !== 'string') throw errors.invalidRequest(`${path}: must be a string.`, path);
  return value;
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
