/**
 * The policy that governs one caller's call of one tool: the most specific scope wins (API key, then
 * team, then organization, then the server-wide default); within a scope a policy naming the tool wins
 * over one for `*`. The first match applies whole; fields are not merged across scopes. A server-wide
 * policy marked `is_ceiling` (for the tool or for `*`) then bounds the result: narrower scopes may only
 * tighten it (issue 25), so a looser policy, even one written before the ceiling, is held to it.
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

/**
 * The limits a ceiling bounds from above (null: no limit, the loosest value). The result cache is not
 * among them: a cached answer loosens nothing (approval and max_rpm still apply to it), and its null
 * means no caching rather than no bound.
 */
const CEILING_LIMITS = ['max_rpm', 'max_concurrency', 'max_total_execution_time_ms'] as const;

export function resolvePolicy(
  policies: readonly McpToolPolicyRecord[],
  caller: Caller,
  toolName: string,
): EffectivePolicy {
  const ceilings = policies.filter(
    (policy) => policy.is_ceiling && policy.scope_type === 'server' && appliesTo(policy, toolName),
  );
  return ceilings.reduce(tighten, mostSpecific(policies, caller, toolName));
}

function mostSpecific(
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

function appliesTo(policy: McpToolPolicyRecord, toolName: string): boolean {
  return policy.tool_name === toolName || policy.tool_name === '*';
}

/** The stricter of the two: denied stays denied, manual stays manual, each limit the lower one. */
function tighten(policy: EffectivePolicy, ceiling: McpPolicyLimits): EffectivePolicy {
  const tightened: EffectivePolicy = {
    ...policy,
    enabled: policy.enabled && ceiling.enabled,
    require_approval: ceiling.require_approval === 'manual' ? 'manual' : policy.require_approval,
  };
  for (const name of CEILING_LIMITS) tightened[name] = lower(policy[name], ceiling[name]);
  return tightened;
}

function lower(value: number | null, bound: number | null): number | null {
  if (bound === null) return value;
  return value === null ? bound : Math.min(value, bound);
}

/**
 * The first field of `changes` that is looser than `ceiling`, with why; undefined when every field it
 * sets only tightens (fields it leaves out are held to the ceiling when a call resolves).
 */
export function loosenedField(
  changes: Partial<McpPolicyLimits>,
  ceiling: McpPolicyLimits,
): { field: string; reason: string } | undefined {
  if (changes.enabled === true && !ceiling.enabled)
    return { field: 'enabled', reason: 'the server-wide ceiling denies this tool' };
  if (changes.require_approval === 'never' && ceiling.require_approval === 'manual')
    return { field: 'require_approval', reason: 'the server-wide ceiling requires manual approval' };
  for (const name of CEILING_LIMITS) {
    const value = changes[name];
    const bound = ceiling[name];
    if (value === undefined || bound === null) continue;
    if (value === null || value > bound)
      return { field: name, reason: `the server-wide ceiling allows at most ${bound}` };
  }
  return undefined;
}
