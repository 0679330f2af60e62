import { describe, expect, it } from 'vitest';
import type { Caller } from '../canonical/caller.ts';
import type { McpToolPolicyRecord } from '../store/db/repositories/mcp-tool-policy-repository.ts';
import { defaultPolicy, loosenedField, resolvePolicy } from './policy-resolution.ts';

const caller = { kind: 'api_key', keyId: 'key_a', teamId: 'team_a', organizationId: 'org_a' } as Caller;

function policy(
  scope_type: McpToolPolicyRecord['scope_type'],
  scope_id: string,
  tool_name = 'read',
): McpToolPolicyRecord {
  return {
    policy_id: `${scope_type}-${tool_name}`,
    server_id: 's',
    tool_name,
    scope_type,
    scope_id,
    enabled: true,
    require_approval: 'never',
    max_rpm: null,
    max_concurrency: null,
    result_cache_ttl_seconds: null,
    max_total_execution_time_ms: null,
    is_ceiling: false,
    created_at: 0,
    updated_at: 0,
  };
}

describe('policy resolution', () => {
  const all = [
    policy('server', ''),
    policy('organization', 'org_a'),
    policy('team', 'team_a'),
    policy('api_key', 'key_a'),
  ];

  it('prefers the API key, then the team, then the organization, then the server-wide default', () => {
    expect(resolvePolicy(all, caller, 'read').policyId).toBe('api_key-read');
    expect(resolvePolicy(all.slice(0, 3), caller, 'read').policyId).toBe('team-read');
    expect(resolvePolicy(all.slice(0, 2), caller, 'read').policyId).toBe('organization-read');
    expect(resolvePolicy(all.slice(0, 1), caller, 'read')).toMatchObject({
      policyId: 'server-read',
      scope: 'server',
    });
  });

  it('ignores policies of other scopes and other tools, falling back to the default', () => {
    const others = [
      policy('api_key', 'key_b'),
      policy('team', 'team_b'),
      policy('organization', 'org_b'),
      policy('server', '', 'write'),
    ];
    expect(resolvePolicy(others, caller, 'read')).toBe(defaultPolicy);
  });

  it('prefers a policy naming the tool over a * policy of the same scope, but not over a more specific scope', () => {
    const policies = [
      policy('team', 'team_a', '*'),
      policy('team', 'team_a', 'read'),
      policy('api_key', 'key_a', '*'),
    ];
    expect(resolvePolicy(policies, caller, 'read').policyId).toBe('api_key-*');
    expect(resolvePolicy(policies.slice(0, 2), caller, 'read').policyId).toBe('team-read');
    expect(resolvePolicy(policies.slice(0, 2), caller, 'write').policyId).toBe('team-*');
  });

  it('names the scope whose counters the policy shares', () => {
    expect(resolvePolicy([policy('team', 'team_a')], caller, 'read').scope).toBe('team:team_a');
  });
});

describe('server-wide ceilings (issue 25)', () => {
  const ceiling = (fields: Partial<McpToolPolicyRecord>, tool = 'read') => ({
    ...policy('server', '', tool),
    is_ceiling: true,
    ...fields,
  });
  const team = (fields: Partial<McpToolPolicyRecord>) => ({ ...policy('team', 'team_a'), ...fields });

  it('holds a looser narrower policy to the ceiling: manual stays manual, denied stays denied, limits the lower', () => {
    const resolved = resolvePolicy(
      [
        ceiling({ require_approval: 'manual', enabled: false, max_rpm: 5, max_concurrency: 2 }),
        team({ max_rpm: 100, max_concurrency: null, max_total_execution_time_ms: 1_000 }),
      ],
      caller,
      'read',
    );
    expect(resolved).toMatchObject({
      policyId: 'team-read',
      scope: 'team:team_a',
      require_approval: 'manual',
      enabled: false,
      max_rpm: 5,
      max_concurrency: 2,
      max_total_execution_time_ms: 1_000,
    });
  });

  it('keeps what a narrower policy makes stricter, and its own result cache', () => {
    const resolved = resolvePolicy(
      [
        ceiling({ max_rpm: 5, result_cache_ttl_seconds: 60 }),
        team({ max_rpm: 2, result_cache_ttl_seconds: null }),
      ],
      caller,
      'read',
    );
    expect(resolved).toMatchObject({ max_rpm: 2, result_cache_ttl_seconds: null });
  });

  it('applies a ceiling for * to every tool, and a default that is not a ceiling to none', () => {
    const star = resolvePolicy([ceiling({ require_approval: 'manual' }, '*'), team({})], caller, 'read');
    expect(star.require_approval).toBe('manual');
    const defaultOnly = resolvePolicy(
      [{ ...ceiling({ require_approval: 'manual' }), is_ceiling: false }, team({})],
      caller,
      'read',
    );
    expect(defaultOnly.require_approval).toBe('never');
  });

  it('names the first field a write would loosen below a ceiling', () => {
    const bound = ceiling({ require_approval: 'manual', enabled: false, max_rpm: 5 });
    expect(loosenedField({ require_approval: 'never' }, bound)?.field).toBe('require_approval');
    expect(loosenedField({ enabled: true }, bound)?.field).toBe('enabled');
    expect(loosenedField({ max_rpm: 6 }, bound)?.field).toBe('max_rpm');
    expect(loosenedField({ max_rpm: null }, bound)?.field).toBe('max_rpm');
    expect(loosenedField({ max_rpm: 5, require_approval: 'manual', enabled: false }, bound)).toBeUndefined();
    expect(loosenedField({ max_concurrency: null, result_cache_ttl_seconds: 600 }, bound)).toBeUndefined();
  });
});
