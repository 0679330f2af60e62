/**
 * The policy that governs one caller's call of one tool: the most specific scope wins (API key, then
 * team, then organization, then the server-wide default); within a scope a policy naming the tool wins
 * over one for `*`. The first match applies whole; fields are not merged across scopes.
 */
import type { Caller } from '../canonical/caller.ts';
import type {
  McpPolicyLimits,
  McpToolPolicyRecord,
} from '../store/db/repositories/mcp-tool-policy-repository.ts';

export interface EffectivePolicy extends McpPolicyLimits {
  /** The policy applied, or null for the built-in default. */
  policyId: string | null;
  /** The scope whose counters the policy's max_concurrency shares (`server`, `team:t1` …). */
  scope: string;
}

export const defaultPolicy: EffectivePolicy = Object.freeze({
  policyId: null,
  scope: 'server',
  enabled: true,
  require_approval: 'never',
  max_rpm: null,
  max_concurrency: null,
  result_cache_ttl_seconds: null,
  max_total_execution_time_ms: null,
});

export function resolvePolicy(
  policies: readonly McpToolPolicyRecord[],
  caller: Caller,
  toolName: string,
): EffectivePolicy {
  const scopes: Array<[McpToolPolicyRecord['scope_type'], string | null]> = [
    ['api_key', caller.keyId],
    ['team', caller.teamId],
    ['organization', caller.organizationId],
    ['server', ''],
  ];
  for (const [scopeType, scopeId] of scopes) {
    if (scopeId === null) continue;
    const inScope = policies.filter(
      (policy) => policy.scope_type === scopeType && policy.scope_id === scopeId,
    );
    const match =
      inScope.find((policy) => policy.tool_name === toolName) ??
      inScope.find((policy) => policy.tool_name === '*');
    if (match) {
      return {
        policyId: match.policy_id,
        scope: scopeType === 'server' ? 'server' : `${scopeType}:${scopeId}`,
        enabled: match.enabled,
        require_approval: match.require_approval,
        max_rpm: match.max_rpm,
        max_concurrency: match.max_concurrency,
        result_cache_ttl_seconds: match.result_cache_ttl_seconds,
        max_total_execution_time_ms: match.max_total_execution_time_ms,
      };
    }
  }
  return defaultPolicy;
}
