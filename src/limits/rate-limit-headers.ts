/**
 * The rate-limit response headers of the spec: limit, remaining and reset (Unix seconds) of the
 * tightest scope for requests and for tokens, the scopes checked, and a near_limit warning above 80%.
 */
import type { PlannedCheck } from './limit-checks.ts';

const WARNING_THRESHOLD = 0.8;

export interface CheckState {
  planned: PlannedCheck;
  /** Counter value after this request (or the value that made it fail). */
  count: number;
  /** Window reset, epoch ms. */
  reset: number;
}

/**
 * `checked` names every scope checked (on a 429 `states` holds only the failing check, yet the scope
 * header still lists them all); it defaults to the names of `states`.
 */
export function rateLimitHeaders(
  states: readonly CheckState[],
  checked: readonly PlannedCheck[] = states.map((state) => state.planned),
): Record<string, string> {
  if (states.length === 0 && checked.length === 0) return {};
  const headers: Record<string, string> = {};
  for (const counts of ['requests', 'tokens'] as const) {
    let tightest: CheckState | undefined;
    for (const state of states) {
      if (state.planned.counts !== counts) continue;
      if (
        !tightest ||
        remaining(state) < remaining(tightest) ||
        (remaining(state) === remaining(tightest) && state.planned.check.limit < tightest.planned.check.limit)
      ) {
        tightest = state;
      }
    }
    if (!tightest) continue;
    headers[`x-ratelimit-limit-${counts}`] = String(tightest.planned.check.limit);
    headers[`x-ratelimit-remaining-${counts}`] = String(remaining(tightest));
    headers[`x-ratelimit-reset-${counts}`] = String(Math.ceil(tightest.reset / 1000));
  }
  headers['x-gateway-ratelimit-scope'] = checked.map((item) => item.name).join(',');
  if (states.some((state) => state.count > state.planned.check.limit * WARNING_THRESHOLD))
    headers['x-ratelimit-warning'] = 'near_limit';
  return headers;
}

function remaining(state: CheckState): number {
  return Math.max(0, state.planned.check.limit - state.count);
}
