/**
 * The bound on what one provider call can have used, and the check that keeps an implausible usage
 * report from being charged as it is (docs/limits.md, "Clamping"): 10^15 tokens were once charged as
 * $2×10^11. A count above the bound is charged the bound, a negative one 0, a fraction rounded up; a
 * report whose prompt or completion count is not a number at all is unreadable (charged an estimate).
 */

import type { Usage } from '../canonical/usage.ts';
import type { Config } from '../config/config.ts';

/**
 * Tokens one call is assumed never to pass when its model's window is not configured: above the
 * largest context windows offered today (10M), far below anything that could wreck a budget.
 */
export const DEFAULT_USAGE_BOUND = 10_000_000;

export type UsageProblem = 'above_bound' | 'negative' | 'not_integer' | 'unreadable';

export interface CheckedUsage {
  /** The usage to charge: the report itself when it is plausible (no copy), else a clamped copy. */
  usage: Usage | undefined;
  /** What was wrong, when something was worth reporting; `unreadable` leaves `usage` undefined. */
  problem: UsageProblem | undefined;
}

/**
 * Per deployment, the most tokens one call can count: `model_info.max_input_tokens` +
 * `max_output_tokens` when both are set (a call reads at most its window and writes at most its output
 * limit), else DEFAULT_USAGE_BOUND.
 */
export function usageBounds(config: Pick<Config, 'model_list'>): (deploymentId: string) => number {
  const bounds = new Map<string, number>();
  for (const entry of config.model_list) {
    const { max_input_tokens: input, max_output_tokens: output } = entry.model_info;
    if (typeof input === 'number' && typeof output === 'number')
      bounds.set(entry.model_info.id, input + output);
  }
  return (deploymentId) => bounds.get(deploymentId) ?? DEFAULT_USAGE_BOUND;
}

/** Checks a provider's report against `bound`; plausible reports (the common case) cost no allocation. */
export function checkUsage(usage: Usage, bound: number): CheckedUsage {
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = usage;
  if (plausible(prompt, bound) && plausible(completion, bound) && plausible(total, bound))
    return { usage, problem: undefined };
  if (!isNumber(prompt) || !isNumber(completion)) return { usage: undefined, problem: 'unreadable' };
  let problem: UsageProblem | undefined;
  const clamp = (value: number): number => {
    const fixed = value < 0 ? 0 : value > bound ? bound : Math.ceil(value);
    const found: UsageProblem | undefined =
      value < 0 ? 'negative' : value > bound ? 'above_bound' : fixed !== value ? 'not_integer' : undefined;
    // The worst finding names the report: a count above the bound is what wrecks budgets.
    if (found === 'above_bound' || (found !== undefined && problem === undefined)) problem = found;
    return fixed;
  };
  const promptTokens = clamp(prompt);
  const completionTokens = clamp(completion);
  // A total that is missing or not a number is their sum, as readUsage fills it in: nothing to report.
  const sum = promptTokens + completionTokens;
  const totalTokens = isNumber(total) ? Math.min(clamp(total), sum) : sum;
  return {
    usage: {
      ...usage,
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: totalTokens,
    },
    problem,
  };
}

function plausible(value: unknown, bound: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= bound;
}

/** A number, ±Infinity included (JSON.parse reads 1e400 as Infinity); NaN is not a count of anything. */
function isNumber(value: unknown): value is number {
  return typeof value === 'number' && !Number.isNaN(value);
}
