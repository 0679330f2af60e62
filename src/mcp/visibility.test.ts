import { describe, expect, it } from 'vitest';
import type { Caller } from '../canonical/caller.ts';
import { masterCaller } from '../identity/authenticator.ts';
import type { McpBindingRecord } from '../store/db/repositories/mcp-binding-repository.ts';
import type { McpServerRecord } from '../store/db/repositories/mcp-server-repository.ts';
import type { CatalogServer, CatalogSnapshot } from './mcp-catalog.ts';
import { findVisibleTool, visibleTools } from './visibility.ts';

const caller: Caller = {
  kind: 'api_key',
  keyId: 'key_a',
  keyName: null,
  userId: 'user_a',
  teamId: 'team_a',
  organizationId: 'org_a',
  userRole: 'member',
  models: null,
  maxParallelRequests: null,
  cacheEnabled: null,
  scopes: [],
  expiresAt: null,
};

function server(key: string, bindings: Array<Partial<McpBindingRecord>>, enabled = true): CatalogServer {
  const record = { server_id: `srv_${key}`, server_key: key, enabled } as McpServerRecord;
  const tools = new Map(
    ['read', 'write'].map((name) => [
      name,
      {
        server_id: record.server_id,
        tool_name: name,
        description: name,
        input_schema: {},
        definition: {},
        refreshed_at: 0,
      },
    ]),
  );
  return {
    record,
    tools,
    policies: [],
    bindings: bindings.map((binding, index) => ({
      binding_id: `b${index}`,
      server_id: record.server_id,
      scope_type: 'api_key',
      scope_id: 'key_a',
      enabled: true,
      tool_allowlist: null,
      created_at: 0,
      updated_at: 0,
      ...binding,
    })),
  };
}

function snapshot(...servers: CatalogServer[]): CatalogSnapshot {
  return {
    byId: new Map(servers.map((entry) => [entry.record.server_id, entry])),
    byKey: new Map(servers.map((entry) => [entry.record.server_key, entry])),
  };
}

const names = (catalog: CatalogSnapshot, who: Caller = caller) =>
  visibleTools(catalog, who).map((tool) => tool.name);

describe('tool visibility', () => {
  it.each([
    ['api_key', 'key_a'],
    ['team', 'team_a'],
    ['organization', 'org_a'],
  ] as const)('shows every tool when an enabled %s binding covers the caller', (scope_type, scope_id) => {
    expect(names(snapshot(server('s', [{ scope_type, scope_id }])))).toEqual(['s.read', 's.write']);
  });

  it.each([
    ['api_key', 'key_b'],
    ['team', 'team_b'],
    ['organization', 'org_b'],
  ] as const)('hides the server when the %s binding names someone else', (scope_type, scope_id) => {
    expect(names(snapshot(server('s', [{ scope_type, scope_id }])))).toEqual([]);
  });

  it('hides tools of a disabled binding and of a disabled server', () => {
    expect(names(snapshot(server('s', [{ enabled: false }])))).toEqual([]);
    expect(names(snapshot(server('s', [{}], false)))).toEqual([]);
  });

  it('shows only the tools of the allowlist, and the union over covering bindings', () => {
    expect(names(snapshot(server('s', [{ tool_allowlist: ['read'] }])))).toEqual(['s.read']);
    const both = server('s', [
      { tool_allowlist: ['read'] },
      { scope_type: 'team', scope_id: 'team_a', tool_allowlist: ['write'] },
    ]);
    expect(names(snapshot(both))).toEqual(['s.read', 's.write']);
  });

  it('finds a callable tool by its namespaced name only when it is visible', () => {
    const catalog = snapshot(server('s', [{ tool_allowlist: ['read'] }]), server('t', []));
    expect(findVisibleTool(catalog, caller, 's.read')?.tool.tool_name).toBe('read');
    expect(findVisibleTool(catalog, caller, 's.write')).toBeUndefined();
    expect(findVisibleTool(catalog, caller, 't.read')).toBeUndefined();
    expect(findVisibleTool(catalog, caller, 'read')).toBeUndefined();
    expect(findVisibleTool(catalog, caller, 'nope.read')).toBeUndefined();
  });

  it('lets the master key see every tool of enabled servers', () => {
    expect(names(snapshot(server('s', []), server('t', [], false)), masterCaller)).toEqual([
      's.read',
      's.write',
    ]);
  });
});
