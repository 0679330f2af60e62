/**
 * Translates a canonical chat request to a Bedrock Converse request body: system prompt, alternating
 * user/assistant turns of content blocks (text, image, toolUse, toolResult), inferenceConfig, toolConfig,
 * and structured output as a forced tool.
 */
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool } from '../../canonical/chat-request.ts';

/** The tool a json_schema response_format is forced through; its input becomes the answer text. */
export const JSON_TOOL_NAME = 'json_output';

export type ConverseBlock = Record<string, unknown>;

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseBlock[];
}

export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: Array<{ text: string }>;
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: Array<{ toolSpec: ToolSpec }>; toolChoice?: Record<string, unknown> };
}

interface ToolSpec {
  name: string;
  description?: string;
  inputSchema: { json: unknown };
}

export interface TranslatedRequest {
  body: ConverseRequest;
  /** Set when the answer's toolUse of this name is the structured output (text content). */
  jsonToolName: string | undefined;
}

const IMAGE_NOTE =
  '[image omitted: Bedrock accepts only inline (data: URL) images in png, jpeg, gif or webp]';
const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

export function toConverseRequest(
  request: ChatRequest,
  defaults: Readonly<Record<string, unknown>> = {},
): TranslatedRequest {
  const system: Array<{ text: string }> = [];
  const messages: ConverseMessage[] = [];
  for (const message of request.messages) {
    if (message.role === 'system' || message.role === 'developer') {
      const text = textOf(message.content);
      if (text) system.push({ text });
      continue;
    }
    const turn = toTurn(message);
    if (turn.content.length === 0) continue;
    const previous = messages.at(-1);
    // Bedrock wants alternating turns: consecutive same-role messages (tool results) become one turn.
    if (previous?.role === turn.role) previous.content.push(...turn.content);
    else messages.push(turn);
  }
  const body: ConverseRequest = { messages };
  if (system.length > 0) body.system = system;
  const inferenceConfig = toInferenceConfig(request, defaults);
  if (inferenceConfig) body.inferenceConfig = inferenceConfig;
  const { toolConfig, jsonToolName } = toToolConfig(request);
  if (toolConfig) body.toolConfig = toolConfig;
  return { body, jsonToolName };
}

function toTurn(message: ChatMessage): ConverseMessage {
  if (message.role === 'tool') {
    return { role: 'user', content: [toolResultBlock(message)] };
  }
  if (message.role === 'assistant') {
    const content = contentBlocks(message.content);
    for (const call of message.tool_calls ?? []) {
      content.push({
        toolUse: {
          toolUseId: toolUseId(call.id),
          name: call.function.name,
          input: parseArguments(call.function.arguments),
        },
      });
    }
    return { role: 'assistant', content };
  }
  return { role: 'user', content: contentBlocks(message.content) };
}

function toolResultBlock(message: ChatMessage): ConverseBlock {
  const text = textOf(message.content);
  const json = parseObject(text);
  return {
    toolResult: {
      toolUseId: toolUseId(message.tool_call_id ?? ''),
      content: [json === undefined ? { text: text || ' ' } : { json }],
      status: 'success',
    },
  };
}

function contentBlocks(content: ChatMessage['content']): ConverseBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  const blocks: ConverseBlock[] = [];
  for (const part of content) {
    if (part.type === 'text' && typeof part.text === 'string' && part.text) blocks.push({ text: part.text });
    else if (part.type === 'image_url') blocks.push(imageBlock(part));
  }
  return blocks;
}

/** An inline image; a remote URL cannot be sent (Bedrock fetches nothing), so a note stands in for it. */
function imageBlock(part: ContentPart): ConverseBlock {
  const url = (part as { image_url?: { url?: unknown } }).image_url?.url;
  const match = typeof url === 'string' ? /^data:([^;,]+);base64,(.*)$/s.exec(url) : null;
  const format = match ? IMAGE_FORMATS[match[1]!.toLowerCase()] : undefined;
  if (!match || !format) return { text: IMAGE_NOTE };
  return { image: { format, source: { bytes: match[2]! } } };
}

function textOf(content: ChatMessage['content']): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** Bedrock tool use ids match [a-zA-Z0-9_-]{1,64}; other ids are mapped the same way on both sides. */
function toolUseId(id: string): string {
  const cleaned = id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return cleaned || 'tool_call';
}

function parseArguments(text: string): unknown {
  return parseObject(text) ?? {};
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function toInferenceConfig(
  request: ChatRequest,
  defaults: Readonly<Record<string, unknown>>,
): ConverseRequest['inferenceConfig'] {
  const config: NonNullable<ConverseRequest['inferenceConfig']> = {};
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? defaults.max_tokens;
  if (typeof maxTokens === 'number') config.maxTokens = maxTokens;
  const temperature = request.temperature ?? defaults.temperature;
  if (typeof temperature === 'number') config.temperature = temperature;
  const topP = request.top_p ?? defaults.top_p;
  if (typeof topP === 'number') config.topP = topP;
  const stop = request.stop ?? defaults.stop;
  if (typeof stop === 'string') config.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0)
    config.stopSequences = stop.filter((s) => typeof s === 'string');
  return Object.keys(config).length > 0 ? config : undefined;
}

function toToolConfig(request: ChatRequest): {
  toolConfig: ConverseRequest['toolConfig'];
  jsonToolName: string | undefined;
} {
  const choice = request.tool_choice;
  // Bedrock has no "none": the tools are not offered at all.
  const functions = choice === 'none' ? [] : (request.tools ?? []).filter(isFunctionTool);
  const tools: Array<{ toolSpec: ToolSpec }> = functions.map((tool) => ({
    toolSpec: {
      name: tool.function.name,
      ...(tool.function.description ? { description: tool.function.description } : {}),
      inputSchema: { json: tool.function.parameters ?? { type: 'object', properties: {} } },
    },
  }));
  const schema = jsonSchemaOf(request.response_format);
  if (schema !== undefined) {
    tools.push({
      toolSpec: {
        name: JSON_TOOL_NAME,
        description: 'Answer with JSON of this schema',
        inputSchema: { json: schema },
      },
    });
    return {
      toolConfig: { tools, toolChoice: { tool: { name: JSON_TOOL_NAME } } },
      jsonToolName: JSON_TOOL_NAME,
    };
  }
  if (tools.length === 0) return { toolConfig: undefined, jsonToolName: undefined };
  const toolChoice = toToolChoice(choice);
  return { toolConfig: { tools, ...(toolChoice ? { toolChoice } : {}) }, jsonToolName: undefined };
}

function toToolChoice(choice: unknown): Record<string, unknown> | undefined {
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  const name = (choice as { function?: { name?: unknown } } | null | undefined)?.function?.name;
  return typeof name === 'string' ? { tool: { name } } : undefined;
}

/** The schema of a json_schema response_format; json_object asks for any object. */
function jsonSchemaOf(format: unknown): unknown {
  const record = format as { type?: unknown; json_schema?: { schema?: unknown } } | null | undefined;
  if (record?.type === 'json_schema') return record.json_schema?.schema ?? { type: 'object' };
  if (record?.type === 'json_object') return { type: 'object' };
  return undefined;
}

function isFunctionTool(tool: { type: string }): tool is FunctionTool {
  return tool.type === 'function' && typeof (tool as FunctionTool).function?.name === 'string';
}
