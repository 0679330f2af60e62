/** The in-memory tier-policy view admission reads: modes, lookups, reloads on invalidation. */
import { describe, expect, it } from 'vitest';
import { TierPolicies, type TierPolicyLimit } from './tier-policies.ts';

function view(
  rows: TierPolicyLimit[][],
  mode: 'off' | 'enforce' = 'enforce',
  missing: 'fail_open' | 'fail_closed' = 'fail_closed',
) {
  let loads = 0;
  const errors: unknown[] = [];
  const policies = new TierPolicies({
    mode,
    missingServiceMode: missing,
    load: async () => {
      const next = rows[Math.min(loads, rows.length - 1)]!;
      loads++;
      if (next.length === 1 && next[0]!.model === 'FAIL') throw new Error('database down');
      return next;
    },
    onError: (error) => errors.push(error),
  });
  return { policies, loads: () => loads, errors };
}

const row = (organizationId: string, model: string, outputTpmLimit: number): TierPolicyLimit => ({
  organizationId,
  model,
  outputTpmLimit,
});

describe('the tier-policy view', () => {
  it('enforces only with enforce and fail_closed (spec rule 8)', () => {
    expect(view([[]], 'enforce', 'fail_closed').policies.enforcing).toBe(true);
    expect(view([[]], 'enforce', 'fail_open').policies.enforcing).toBe(false);
    expect(view([[]], 'off', 'fail_closed').policies.enforcing).toBe(false);
  });

  it('answers the limit of an exact organization and model, per organization', async () => {
    const { policies } = view([[row('org-a', 'gpt', 10), row('org-b', 'gpt', 20)]]);
    expect(policies.hasPolicies).toBe(false);
    await policies.start();
    expect(policies.outputLimit('org-a', 'gpt')).toBe(10);
    expect(policies.outputLimit('org-b', 'gpt')).toBe(20);
    expect(policies.outputLimit('org-a', 'GPT')).toBeUndefined();
    expect(policies.outputLimit('org-c', 'gpt')).toBeUndefined();
    expect(policies.hasPolicies).toBe(true);
    expect(policies.size).toBe(2);
  });

  it('reloads on a tier_policies or organization invalidation, and ignores others', async () => {
    const { policies, loads } = view([[row('org-a', 'gpt', 10)], [row('org-a', 'gpt', 99)], []]);
    await policies.start();
    policies.invalidate([{ kind: 'key' }, { kind: 'team' }]);
    expect(loads()).toBe(1);
    policies.invalidate([{ kind: 'tier_policies' }]);
    await policies.refresh();
    expect(policies.outputLimit('org-a', 'gpt')).toBeUndefined();
    expect(loads()).toBe(3);
  });

  it('coalesces concurrent reloads but always reads once more after a change announced mid-read', async () => {
    const { policies, loads } = view([[], [row('o', 'm', 1)], [row('o', 'm', 2)], [row('o', 'm', 3)]]);
    await policies.start();
    const first = policies.refresh();
    const second = policies.refresh();
    const third = policies.refresh();
    await Promise.all([first, second, third]);
    // One read in flight, one more for the calls that arrived during it.
    expect(loads()).toBe(3);
    expect(policies.outputLimit('o', 'm')).toBe(2);
  });

  it('keeps the previous view when a reload fails, and reports the failure', async () => {
    const { policies, errors } = view([[row('o', 'm', 5)], [row('x', 'FAIL', 0)]]);
    await policies.start();
    await policies.refresh();
    expect(policies.outputLimit('o', 'm')).toBe(5);
    expect(errors).toHaveLength(1);
  });
});
