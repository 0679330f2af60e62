/**
 * Which tools a caller sees: a tool of an enabled server is visible when an enabled binding covers the
 * caller's API key, team or organization and that binding's tool_allowlist names the tool (or is
 * absent). Several covering bindings add up. The master key sees every tool of every enabled server.
 */
import type { Caller } from '../canonical/caller.ts';
import type { McpBindingRecord } from '../store/db/repositories/mcp-binding-repository.ts';
import type { McpToolRecord } from '../store/db/repositories/mcp-tool-repository.ts';
import type { CatalogServer, CatalogSnapshot } from './mcp-catalog.ts';

export interface VisibleTool {
  /** `server_key.tool_name`. */
  readonly name: string;
  readonly server: CatalogServer;
  readonly tool: McpToolRecord;
}

export function qualifiedToolName(serverKey: string, toolName: string): string {
  return `${serverKey}.${toolName}`;
}

export function bindingCovers(binding: McpBindingRecord, caller: Caller): boolean {
  if (!binding.enabled) return false;
  switch (binding.scope_type) {
    case 'api_key':
      return caller.keyId !== null && binding.scope_id === caller.keyId;
    case 'team':
      return caller.teamId !== null && binding.scope_id === caller.teamId;
    case 'organization':
      return caller.organizationId !== null && binding.scope_id === caller.organizationId;
  }
}

/** Names of the server's tools the caller may see, or 'all'. Empty when no binding covers the caller. */
function allowedToolNames(server: CatalogServer, caller: Caller): Set<string> | 'all' {
  if (caller.kind === 'master') return 'all';
  const names = new Set<string>();
  for (const binding of server.bindings) {
    if (!bindingCovers(binding, caller)) continue;
    if (binding.tool_allowlist === null) return 'all';
    for (const name of binding.tool_allowlist) names.add(name);
  }
  return names;
}

export function visibleToolsOfServer(server: CatalogServer, caller: Caller): VisibleTool[] {
  if (!server.record.enabled) return [];
  const allowed = allowedToolNames(server, caller);
  if (allowed !== 'all' && allowed.size === 0) return [];
  const visible: VisibleTool[] = [];
  for (const tool of server.tools.values()) {
    if (allowed === 'all' || allowed.has(tool.tool_name)) {
      visible.push({ name: qualifiedToolName(server.record.server_key, tool.tool_name), server, tool });
    }
  }
  return visible;
}

export function visibleTools(snapshot: CatalogSnapshot, caller: Caller): VisibleTool[] {
  const visible: VisibleTool[] = [];
  for (const server of snapshot.byKey.values()) visible.push(...visibleToolsOfServer(server, caller));
  return visible;
}

/** The tool named `server_key.tool_name` when the caller may see it. */
export function findVisibleTool(
  snapshot: CatalogSnapshot,
  caller: Caller,
  name: string,
): VisibleTool | undefined {
  const dot = name.indexOf('.');
  if (dot <= 0) return undefined;
  const server = snapshot.byKey.get(name.slice(0, dot));
  const tool = server?.tools.get(name.slice(dot + 1));
  if (!server || !tool || !server.record.enabled) return undefined;
  const allowed = allowedToolNames(server, caller);
  if (allowed !== 'all' && !allowed.has(tool.tool_name)) return undefined;
  return { name, server, tool };
}
