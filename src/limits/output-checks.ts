/**
 * Which output-token counters a request checks and charges (spec: Limits > Output tokens per minute,
 * rules 2, 8 and 9), and the output headers of its answer. Scalar `output_tpm_limit` of organization,
 * team, runtime user and key; `model_output_tpm_limit[model]` of team and key; and, only while tier
 * policies enforce, the organization's tier limit for the model. At most seven counters, keyed by the
 * final caller-facing model (fallbacks and retries charge the same ones).
 */
import type { Caller, ScopeKind } from '../canonical/caller.ts';
import { type OutputCheck, outputCounterBase, outputMinute } from '../store/shared/output-counters.ts';
import type { TierPolicySource } from './tier-policies.ts';

export interface PlannedOutput {
  scope: ScopeKind;
  /** `key_output_tpm`, `team_model_output_tpm` …: error.param, `<name>_exceeded` and the scope header. */
  name: string;
  check: OutputCheck;
}

/** The counters of a request in the spec's scope order; empty for the master key. */
export function planOutputChecks(
  caller: Caller,
  model: string,
  tiers: TierPolicySource | undefined,
): PlannedOutput[] {
  if (caller.kind === 'master') return [];
  const planned: PlannedOutput[] = [];
  const add = (scope: ScopeKind, id: string, limit: number, perModel: boolean) =>
    planned.push({
      scope,
      name: perModel ? `${scope}_model_output_tpm` : `${scope}_output_tpm`,
      check: { key: outputCounterBase(scope, id, perModel ? model : undefined), limit },
    });
  for (const scope of caller.scopes) {
    const scalar = scope.limits.output_tpm_limit;
    if (typeof scalar === 'number') add(scope.kind, scope.id, scalar, false);
    if (scope.kind === 'org' && tiers?.enforcing) {
      const tier = tiers.outputLimit(scope.id, model);
      if (tier !== undefined) add('org', scope.id, tier, true);
    }
    // Per-model maps exist on team and key policies only (spec rule 7).
    if (scope.kind === 'team' || scope.kind === 'key') {
      const perModel = scope.limits.model_output_tpm_limit?.[model];
      if (typeof perModel === 'number') add(scope.kind, scope.id, perModel, true);
    }
  }
  return planned;
}

export const OUTPUT_HEADERS = {
  limit: 'x-ratelimit-limit-output-tokens',
  remaining: 'x-ratelimit-remaining-output-tokens',
  reset: 'x-ratelimit-reset-output-tokens',
  scope: 'x-gateway-ratelimit-output-scope',
} as const;

/**
 * The output headers for recorded usage `counts` (one per planned check) at store time `now`: the
 * limit and scope of the most utilised counter, its remaining capacity clamped at zero (left out when
 * usage is unknown), and the next UTC minute as Unix seconds.
 */
export function outputHeaders(
  planned: readonly PlannedOutput[],
  counts: readonly number[],
  now: number,
  known: boolean,
): Record<string, string> {
  if (planned.length === 0) return {};
  let top = 0;
  for (let index = 1; index < planned.length; index++) {
    if (utilisation(planned, counts, index) > utilisation(planned, counts, top)) top = index;
  }
  const item = planned[top]!;
  const headers: Record<string, string> = {
    [OUTPUT_HEADERS.limit]: String(item.check.limit),
    [OUTPUT_HEADERS.reset]: String((outputMinute(now) + 1) * 60),
    [OUTPUT_HEADERS.scope]: item.name,
  };
  if (known) headers[OUTPUT_HEADERS.remaining] = String(Math.max(0, item.check.limit - (counts[top] ?? 0)));
  return headers;
}

function utilisation(planned: readonly PlannedOutput[], counts: readonly number[], index: number): number {
  return (counts[index] ?? 0) / planned[index]!.check.limit;
}

/** Seconds from store time `now` to the next UTC minute (at least 1): every output Retry-After. */
export function secondsToNextMinute(now: number): number {
  return Math.max(1, Math.ceil(((outputMinute(now) + 1) * 60_000 - now) / 1000));
}
