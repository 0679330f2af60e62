/**
 * Reads the `{type: "mcp", server, allowed_tools?, require_approval: "never"}` entries of a chat
 * request and resolves the MCP tools to offer the model: only tools the caller may see and use, each
 * under a safe alias. Everything that would fail later fails here with 400, before any provider call:
 * streaming, unknown servers or tools, and tools whose policy needs a manual approval.
 */
import type { Caller } from '../canonical/caller.ts';
import type { ChatRequest, FunctionTool } from '../canonical/chat-request.ts';
import { errors } from '../lib/error-catalogue.ts';
import type { ToolDescriptor, ToolExecutor } from '../mcp/tool-executor.ts';
import { createToolAliases, type ToolAliases } from './mcp-tool-aliases.ts';

export interface OfferedMcpTools {
  /** The caller's own (non-MCP) tools, passed to the model unchanged. */
  ownTools: NonNullable<ChatRequest['tools']>;
  /** The MCP tools as function tools named by their aliases. */
  functions: FunctionTool[];
  aliases: ToolAliases;
}

type ToolEntry = NonNullable<ChatRequest['tools']>[number];

export function usesMcpTools(request: ChatRequest): boolean {
  return Array.isArray(request.tools) && request.tools.some((tool) => tool?.type === 'mcp');
}

export function offerMcpTools(request: ChatRequest, caller: Caller, executor: ToolExecutor): OfferedMcpTools {
  if (request.stream === true) {
    throw errors.invalidRequest(
      'tools: MCP tools (type "mcp") are available on non-streaming requests only; send stream: false.',
      'tools',
    );
  }
  const tools = request.tools ?? [];
  const ownTools: ToolEntry[] = [];
  const offered = new Map<string, ToolDescriptor>();
  tools.forEach((entry, index) => {
    if (entry.type !== 'mcp') {
      ownTools.push(entry);
      return;
    }
    for (const descriptor of resolveEntry(
      entry as Record<string, unknown>,
      `tools[${index}]`,
      caller,
      executor,
    )) {
      offered.set(descriptor.name, descriptor);
    }
  });
  const ownNames = ownTools.flatMap((tool) =>
    tool.type === 'function' ? [(tool as FunctionTool).function?.name].filter(Boolean) : [],
  ) as string[];
  const aliases = createToolAliases([...offered.keys()], ownNames);
  const functions: FunctionTool[] = [...offered.values()].map((descriptor) => ({
    type: 'function',
    function: {
      name: aliases.aliasOf(descriptor.name),
      description: descriptor.description,
      parameters: descriptor.inputSchema,
    },
  }));
  return { ownTools, functions, aliases };
}

function resolveEntry(
  entry: Record<string, unknown>,
  path: string,
  caller: Caller,
  executor: ToolExecutor,
): ToolDescriptor[] {
  for (const key of Object.keys(entry)) {
    if (!['type', 'server', 'server_label', 'allowed_tools', 'require_approval'].includes(key)) {
      throw errors.invalidRequest(`${path}.${key}: unknown field of an MCP tool entry.`, `${path}.${key}`);
    }
  }
  const serverKey = entry.server ?? entry.server_label;
  if (typeof serverKey !== 'string' || serverKey.length === 0) {
    throw errors.invalidRequest(
      `${path}.server: must be the server_key of a registered MCP server.`,
      `${path}.server`,
    );
  }
  if (entry.require_approval !== undefined && entry.require_approval !== 'never') {
    throw errors.invalidRequest(
      `${path}.require_approval: only "never" is supported; tools that need approval cannot run inside a chat request.`,
      `${path}.require_approval`,
    );
  }
  const server = executor.toolsOfServer(caller, serverKey);
  if (!server) {
    throw errors.invalidRequest(
      `${path}.server: no MCP server '${serverKey}' with tools this API key may use.`,
      `${path}.server`,
    );
  }
  let tools = server.tools;
  if (entry.allowed_tools !== undefined) {
    if (!Array.isArray(entry.allowed_tools) || entry.allowed_tools.some((name) => typeof name !== 'string')) {
      throw errors.invalidRequest(
        `${path}.allowed_tools: must be a list of tool names.`,
        `${path}.allowed_tools`,
      );
    }
    const wanted = new Set(entry.allowed_tools as string[]);
    const known = new Set(tools.map((tool) => tool.descriptor.name.slice(serverKey.length + 1)));
    const unknown = [...wanted].filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw errors.invalidRequest(
        `${path}.allowed_tools: ${unknown.map((name) => `'${name}'`).join(', ')} is not a visible tool of '${serverKey}'.`,
        `${path}.allowed_tools`,
      );
    }
    tools = tools.filter((tool) => wanted.has(tool.descriptor.name.slice(serverKey.length + 1)));
  }
  const manual = tools.filter((tool) => tool.policy.enabled && tool.policy.require_approval === 'manual');
  if (manual.length > 0) {
    throw errors.invalidRequest(
      `${path}: ${manual.map((tool) => `'${tool.descriptor.name}'`).join(', ')} requires a manual approval, which a chat request cannot wait for; narrow allowed_tools or call it through /mcp.`,
      path,
    );
  }
  // Tools a policy denies to this caller are not offered: the model could not call them.
  return tools.filter((tool) => tool.policy.enabled).map((tool) => tool.descriptor);
}
