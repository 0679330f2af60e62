/**
 * A canonical chat request → a Gemini GenerateContentRequest: contents and system instruction, function
 * tools as `parametersJsonSchema` (JSON Schema as is), tool_choice as functionCallingConfig, and the
 * sampling fields and response_format as generationConfig. Requests Gemini cannot express are refused.
 */
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { refusedRequest } from './gemini-errors.ts';
import type { GeminiFunctionDeclaration, GeminiGenerationConfig, GeminiRequest } from './gemini-types.ts';
import { toGeminiContents } from './to-gemini-contents.ts';

export function toGeminiRequest(request: ChatRequest): GeminiRequest {
  const gemini: GeminiRequest = toGeminiContents(request.messages);
  const declarations = functionDeclarations(request.tools);
  if (declarations.length > 0) gemini.tools = [{ functionDeclarations: declarations }];
  const toolConfig = functionCallingConfig(request.tool_choice);
  if (toolConfig) gemini.toolConfig = { functionCallingConfig: toolConfig };
  const generationConfig = toGenerationConfig(request);
  if (Object.keys(generationConfig).length > 0) gemini.generationConfig = generationConfig;
  return gemini;
}

function functionDeclarations(tools: ChatRequest['tools']): GeminiFunctionDeclaration[] {
  return (tools ?? []).map((tool) => {
    const fn = tool.type === 'function' ? (tool.function as FunctionShape | undefined) : undefined;
    if (typeof fn?.name !== 'string')
      throw refusedRequest(
        'unsupported_tool_type',
        `tools of type '${String(tool.type)}' are not supported by gemini`,
      );
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      ...(fn.parameters && typeof fn.parameters === 'object' ? { parametersJsonSchema: fn.parameters } : {}),
    };
  });
}

interface FunctionShape {
  name?: unknown;
  description?: unknown;
  parameters?: Record<string, unknown>;
}

type FunctionCallingConfig = NonNullable<GeminiRequest['toolConfig']>['functionCallingConfig'];

function functionCallingConfig(choice: unknown): FunctionCallingConfig | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  const name = (choice as { function?: { name?: unknown } }).function?.name;
  if (typeof name === 'string') return { mode: 'ANY', allowedFunctionNames: [name] };
  throw refusedRequest('unsupported_tool_choice', 'this tool_choice is not supported by gemini');
}

function toGenerationConfig(request: ChatRequest): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const n = request.n;
  if (n !== undefined && n !== null && n !== 1)
    throw refusedRequest('unsupported_n', 'gemini deployments answer one choice: n must be 1');
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') config.maxOutputTokens = maxTokens;
  const numbers = [
    ['temperature', 'temperature'],
    ['top_p', 'topP'],
    ['top_k', 'topK'],
    ['seed', 'seed'],
    ['presence_penalty', 'presencePenalty'],
    ['frequency_penalty', 'frequencyPenalty'],
  ] as const;
  for (const [from, to] of numbers) {
    const value = request[from];
    if (typeof value === 'number') config[to] = value;
  }
  const stop = request.stop;
  if (typeof stop === 'string') config.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) config.stopSequences = stop.map(String);
  Object.assign(config, responseFormat(request.response_format));
  return config;
}

function responseFormat(format: unknown): GeminiGenerationConfig {
  const type = (format as { type?: unknown } | null | undefined)?.type;
  if (type === 'json_object') return { responseMimeType: 'application/json' };
  if (type !== 'json_schema') return {};
  const schema = (format as { json_schema?: { schema?: unknown } }).json_schema?.schema;
  return schema === undefined
    ? { responseMimeType: 'application/json' }
    : { responseMimeType: 'application/json', responseJsonSchema: schema };
}
