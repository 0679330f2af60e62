import { describe, expect, it } from 'vitest';
import type { Caller } from '../canonical/caller.ts';
import type { McpToolPolicyRecord } from '../store/db/repositories/mcp-tool-policy-repository.ts';
import { defaultPolicy, resolvePolicy } from './policy-resolution.ts';

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
