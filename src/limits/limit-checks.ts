/**
 * Turns a caller's identity limits into counter checks, in the spec's order (organization, team, user,
 * API key) and per scope: rpm, tpm (minute), rph (hour), rpd, tpd (day), then the per-model minute maps.
 * A null or absent limit is skipped. Token checks use the pessimistic estimate (body bytes / 4).
 */
import type { Caller, LimitFields, ScopeKind } from '../canonical/caller.ts';
import type { CounterCheck, CounterWindow } from '../store/shared/rate-limit-counters.ts';

export type Dimension = 'rpm' | 'tpm' | 'rph' | 'rpd' | 'tpd' | 'model_rpm' | 'model_tpm';

/** How error messages name a scope. */
export const scopeLabels: Record<ScopeKind, string> = {
  org: 'organization',
  team: 'team',
  user: 'user',
  key: 'API key',
};

export interface PlannedCheck {
  scope: ScopeKind;
  dimension: Dimension;
  /** `key_rph`, `team_model_tpm` …: the name in error.param, codes and x-gateway-ratelimit-scope. */
  name: string;
  counts: 'requests' | 'tokens';
  check: CounterCheck;
}

const scalarDimensions: ReadonlyArray<{
  dimension: Dimension;
  field: keyof LimitFields;
  window: CounterWindow;
  counts: 'requests' | 'tokens';
}> = [
  { dimension: 'rpm', field: 'rpm_limit', window: 'minute', counts: 'requests' },
  { dimension: 'tpm', field: 'tpm_limit', window: 'minute', counts: 'tokens' },
  { dimension: 'rph', field: 'rph_limit', window: 'hour', counts: 'requests' },
  { dimension: 'rpd', field: 'rpd_limit', window: 'day', counts: 'requests' },
  { dimension: 'tpd', field: 'tpd_limit', window: 'day', counts: 'tokens' },
];

export function planChecks(caller: Caller, model: string, tokenEstimate: number): PlannedCheck[] {
  const planned: PlannedCheck[] = [];
  for (const scope of caller.scopes) {
    const base = `rl:${scope.kind}:${scope.id}`;
    const add = (
      dimension: Dimension,
      limit: number,
      window: CounterWindow,
      counts: 'requests' | 'tokens',
      key: string,
    ) =>
      planned.push({
        scope: scope.kind,
        dimension,
        name: `${scope.kind}_${dimension}`,
        counts,
        check: { key, window, limit, amount: counts === 'requests' ? 1 : tokenEstimate },
      });
    for (const { dimension, field, window, counts } of scalarDimensions) {
      const limit = scope.limits[field];
      if (typeof limit === 'number') add(dimension, limit, window, counts, `${base}:${dimension}`);
    }
    const modelKey = encodeURIComponent(model);
    const modelRpm = scope.limits.model_rpm_limit?.[model];
    if (modelRpm !== undefined)
      add('model_rpm', modelRpm, 'minute', 'requests', `${base}:model_rpm:${modelKey}`);
    const modelTpm = scope.limits.model_tpm_limit?.[model];
    if (modelTpm !== undefined)
      add('model_tpm', modelTpm, 'minute', 'tokens', `${base}:model_tpm:${modelKey}`);
  }
  return planned;
}
