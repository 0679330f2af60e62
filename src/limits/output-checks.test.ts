import { describe, expect, it } from 'vitest';
import type { Caller, LimitFields, ScopeKind } from '../canonical/caller.ts';
import { OUTPUT_HEADERS, outputHeaders, planOutputChecks, secondsToNextMinute } from './output-checks.ts';
import type { TierPolicySource } from './tier-policies.ts';

const none: LimitFields = {
  rpm_limit: null,
  tpm_limit: null,
  rph_limit: null,
  rpd_limit: null,
  tpd_limit: null,
  output_tpm_limit: null,
  model_rpm_limit: null,
  model_tpm_limit: null,
  model_output_tpm_limit: null,
  max_budget: null,
  soft_budget: null,
  budget_duration: null,
};

function caller(
  limits: Partial<Record<ScopeKind, Partial<LimitFields>>>,
  kind: Caller['kind'] = 'api_key',
): Caller {
  const order: ScopeKind[] = ['org', 'team', 'user', 'key'];
  return {
    kind,
    keyId: 'k1',
    keyName: null,
    userId: 'u1',
    teamId: 't1',
    organizationId: 'o1',
    userRole: null,
    models: null,
    maxParallelRequests: null,
    cacheEnabled: null,
    expiresAt: null,
    scopes: order.map((scope) => ({
      kind: scope,
      id: `${scope[0]}1`,
      limits: { ...none, ...limits[scope] },
      budget: null,
    })),
  };
}

const tiers = (enforcing: boolean, limit = 500): TierPolicySource => ({
  enforcing,
  hasPolicies: true,
  outputLimit: (organization, model) => (organization === 'o1' && model === 'gpt' ? limit : undefined),
});

describe('planOutputChecks', () => {
  it('checks at most seven counters in scope order: org, org tier, team, team model, user, key, key model (rule 9)', () => {
    const all = caller({
      org: { output_tpm_limit: 1, model_output_tpm_limit: { gpt: 99 } },
      team: { output_tpm_limit: 2, model_output_tpm_limit: { gpt: 3 } },
      user: { output_tpm_limit: 4, model_output_tpm_limit: { gpt: 99 } },
      key: { output_tpm_limit: 5, model_output_tpm_limit: { gpt: 6 } },
    });
    const planned = planOutputChecks(all, 'gpt', tiers(true));
    expect(planned.map((item) => [item.name, item.check.limit])).toEqual([
      ['org_output_tpm', 1],
      ['org_model_output_tpm', 500],
      ['team_output_tpm', 2],
      ['team_model_output_tpm', 3],
      ['user_output_tpm', 4],
      ['key_output_tpm', 5],
      ['key_model_output_tpm', 6],
    ]);
    expect(new Set(planned.map((item) => item.check.key)).size).toBe(7);
  });

  it('a child policy cannot remove an ancestor limit: a key without one is still held by its team (rule 1)', () => {
    const planned = planOutputChecks(caller({ team: { output_tpm_limit: 10 } }), 'gpt', undefined);
    expect(planned.map((item) => item.name)).toEqual(['team_output_tpm']);
  });

  it('applies a per-model map only to its exact caller-facing model id (rule 7)', () => {
    const limits = caller({ key: { model_output_tpm_limit: { gpt: 6 } } });
    expect(planOutputChecks(limits, 'gpt', undefined)).toHaveLength(1);
    expect(planOutputChecks(limits, 'gpt-mini', undefined)).toHaveLength(0);
    expect(planOutputChecks(limits, 'GPT', undefined)).toHaveLength(0);
  });

  it('applies tier limits only while tier policies enforce; team and key maps apply in every mode (rule 8)', () => {
    const limits = caller({ key: { model_output_tpm_limit: { gpt: 6 } } });
    expect(planOutputChecks(limits, 'gpt', tiers(false)).map((item) => item.name)).toEqual([
      'key_model_output_tpm',
    ]);
    expect(planOutputChecks(limits, 'gpt', tiers(true)).map((item) => item.name)).toEqual([
      'org_model_output_tpm',
      'key_model_output_tpm',
    ]);
  });

  it('keys tier counters on organization and model, not on the limit value (rule 8)', () => {
    const limits = caller({});
    const [small] = planOutputChecks(limits, 'gpt', tiers(true, 10));
    const [large] = planOutputChecks(limits, 'gpt', tiers(true, 10_000));
    expect(small!.check.key).toBe(large!.check.key);
  });

  it('exempts master-key requests (rule 2)', () => {
    const master = caller({ key: { output_tpm_limit: 1 } }, 'master');
    expect(planOutputChecks(master, 'gpt', tiers(true))).toEqual([]);
  });
});

describe('outputHeaders', () => {
  const planned = planOutputChecks(
    caller({ team: { output_tpm_limit: 1000 }, key: { output_tpm_limit: 100 } }),
    'gpt',
    undefined,
  );
  const now = Date.parse('2026-11-23T12:00:20Z');

  it('names the most utilised scope, clamps remaining at zero and resets at the next UTC minute', () => {
    expect(outputHeaders(planned, [900, 50], now, true)).toEqual({
      [OUTPUT_HEADERS.limit]: '1000',
      [OUTPUT_HEADERS.remaining]: '100',
      [OUTPUT_HEADERS.reset]: String(Date.parse('2026-11-23T12:01:00Z') / 1000),
      [OUTPUT_HEADERS.scope]: 'team_output_tpm',
    });
    expect(outputHeaders(planned, [900, 150], now, true)[OUTPUT_HEADERS.remaining]).toBe('0');
  });

  it('omits remaining capacity when usage is unknown', () => {
    expect(outputHeaders(planned, [1, 1], now, false)).not.toHaveProperty(OUTPUT_HEADERS.remaining);
  });

  it('sends no output headers without output policies', () => {
    expect(outputHeaders([], [], now, true)).toEqual({});
  });

  it('retries at the next UTC minute', () => {
    expect(secondsToNextMinute(now)).toBe(40);
    expect(secondsToNextMinute(Date.parse('2026-11-23T12:00:59.900Z'))).toBe(1);
  });
});
