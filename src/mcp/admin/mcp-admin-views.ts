/** Public JSON views of MCP admin records: ISO timestamps, and never a secret (only whether it is set). */
import { redactUrl } from '../../lib/upstream-url-policy.ts';
import type { McpBindingRecord } from '../../store/db/repositories/mcp-binding-repository.ts';
import type { McpServerRecord } from '../../store/db/repositories/mcp-server-repository.ts';
import type { McpToolPolicyRecord } from '../../store/db/repositories/mcp-tool-policy-repository.ts';
import type { McpToolRecord } from '../../store/db/repositories/mcp-tool-repository.ts';

export function serverView(record: McpServerRecord, toolCount: number) {
  return {
    server_id: record.server_id,
    server_key: record.server_key,
    name: record.name,
    transport: record.transport,
    // The query string may hold a token: it is write-only, like auth_config.token.
    base_url: redactUrl(record.base_url),
    enabled: record.enabled,
    auth_mode: record.auth_mode,
    auth_config: { token_set: record.auth_token_sealed !== null },
    forwarded_headers_allowlist: record.forwarded_headers_allowlist,
    request_timeout_ms: record.request_timeout_ms,
    source: record.source,
    tool_count: toolCount,
    tools_refreshed_at: isoOrNull(record.tools_refreshed_at),
    last_refresh_error: record.last_refresh_error,
    created_at: iso(record.created_at),
    updated_at: iso(record.updated_at),
  };
}

export function toolView(serverKey: string, tool: McpToolRecord) {
  return {
    name: `${serverKey}.${tool.tool_name}`,
    tool_name: tool.tool_name,
    description: tool.description,
    input_schema: tool.input_schema,
    refreshed_at: iso(tool.refreshed_at),
  };
}

export function bindingView(record: McpBindingRecord) {
  return { ...record, created_at: iso(record.created_at), updated_at: iso(record.updated_at) };
}

export function policyView(record: McpToolPolicyRecord) {
  const serverWide = record.scope_type === 'server';
  return {
    ...record,
    scope_type: serverWide ? null : record.scope_type,
    scope_id: serverWide ? null : record.scope_id,
    created_at: iso(record.created_at),
    updated_at: iso(record.updated_at),
  };
}

export type ServerView = ReturnType<typeof serverView>;

/**
 * What an upstream failure looks like to admins other than the master key: one message, so the admin
 * API cannot be used to tell a refused port from an HTTP status from a server that is not MCP.
 */
export const UNIFORM_UPSTREAM_FAILURE =
  'the upstream could not be reached or did not answer as an MCP server (the master key sees the details)';

/** Said instead of connecting to a server that is disabled (no upstream is contacted). */
export const SERVER_DISABLED = 'the server is disabled: enable it to fetch its tools or check its health';

/** Replaces the upstream failure texts of a view (`error`, `last_refresh_error`) with the uniform one. */
export function withUniformFailures<T extends object>(view: T): T {
  const copy = { ...view } as Record<string, unknown>;
  for (const field of ['error', 'last_refresh_error'] as const) {
    if (typeof copy[field] === 'string' && copy[field] !== SERVER_DISABLED)
      copy[field] = UNIFORM_UPSTREAM_FAILURE;
  }
  return copy as T;
}
export type BindingView = ReturnType<typeof bindingView>;
export type PolicyView = ReturnType<typeof policyView>;

function iso(milliseconds: number): string {
  return new Date(milliseconds).toISOString();
}

function isoOrNull(milliseconds: number | null): string | null {
  return milliseconds === null ? null : iso(milliseconds);
}
