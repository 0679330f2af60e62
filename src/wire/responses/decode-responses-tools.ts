/**
 * Responses tools and tool choice in chat terms: function tools are flat in Responses
 * (`{type, name, parameters}`) and nested in chat; `mcp` tools (the spec's `server`, or OpenAI's
 * `server_label`) pass on to the MCP tool loop; hosted tools (web search, file search …) are refused.
 */
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { errors } from '../../lib/error-catalogue.ts';

type Json = Record<string, unknown>;

export function decodeResponsesTools(tools: unknown, toolChoice: unknown): Partial<ChatRequest> {
  const decoded: Partial<ChatRequest> = {};
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) throw errors.invalidRequest('tools: must be a list of tools.', 'tools');
    if (tools.length > 0) decoded.tools = tools.map((tool, index) => decodeTool(tool, `tools[${index}]`));
  }
  if (toolChoice !== undefined && toolChoice !== null) decoded.tool_choice = decodeToolChoice(toolChoice);
  return decoded;
}

function decodeTool(tool: unknown, at: string): NonNullable<ChatRequest['tools']>[number] {
  if (!isObject(tool)) throw errors.invalidRequest(`${at}: must be a tool object.`, at);
  if (tool.type === 'function') {
    if (typeof tool.name !== 'string' || tool.name.length === 0)
      throw errors.invalidRequest(`${at}.name: must be a non-empty string.`, `${at}.name`);
    return {
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        ...(isObject(tool.parameters) ? { parameters: tool.parameters } : {}),
        ...(typeof tool.strict === 'boolean' ? { strict: tool.strict } : {}),
      },
    };
  }
  if (tool.type === 'mcp') {
    const { server_label: label, ...rest } = tool;
    const server = rest.server === undefined && typeof label === 'string' ? label : rest.server;
    return { ...rest, type: 'mcp', server };
  }
  throw errors.invalidRequest(
    `${at}.type: '${String(tool.type)}' tools are not supported by this gateway (function and mcp are).`,
    `${at}.type`,
  );
}

function decodeToolChoice(choice: unknown): unknown {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string')
    return { type: 'function', function: { name: choice.name } };
  throw errors.invalidRequest(
    'tool_choice: must be auto, none, required or {"type": "function", "name": …}.',
    'tool_choice',
  );
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
