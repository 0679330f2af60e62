/**
 * Budget windows: `budget_duration` is `Nd` (1–365) or `Nh` (1–8760), or null for a lifetime budget.
 * Windows are aligned to the epoch (index = floor(now / duration)), so every replica agrees on them.
 */
import type { BudgetFields, ScopeBudget } from './caller.ts';

/** `Nd` with N 1–365, or `Nh` with N 1–8760 (exact, so the admin schema alone rejects 366d). */
export const BUDGET_DURATION_PATTERN =
  '^(([1-9]|[1-9][0-9]|[12][0-9]{2}|3[0-5][0-9]|36[0-5])d|([1-9]|[1-9][0-9]{1,2}|[1-7][0-9]{3}|8[0-6][0-9]{2}|87[0-5][0-9]|8760)h)$';
/** The largest max_budget or soft_budget accepted, in USD. */
export const MAX_BUDGET_USD = 1e12;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Milliseconds of a `budget_duration`; undefined when it is not `Nd` (1–365) or `Nh` (1–8760). */
export function budgetDurationMs(duration: string): number | undefined {
  const match = /^([1-9][0-9]{0,3})([dh])$/.exec(duration);
  if (!match) return undefined;
  const count = Number(match[1]);
  if (match[2] === 'd') return count <= 365 ? count * DAY_MS : undefined;
  return count <= 8760 ? count * HOUR_MS : undefined;
}

/** USD to integer micro-USD (what the shared store counts); non-finite or negative amounts are 0. */
export function toMicros(usd: number): number {
  return Number.isFinite(usd) && usd > 0 ? Math.round(usd * 1_000_000) : 0;
}

/** The window containing `now`: its index, start and end (epoch ms). A lifetime budget has one window. */
export function budgetWindow(
  durationMs: number,
  now: number,
): { index: number; start: number; end: number | null } {
  if (durationMs <= 0) return { index: 0, start: 0, end: null };
  const index = Math.floor(now / durationMs);
  return { index, start: index * durationMs, end: (index + 1) * durationMs };
}

/** The budget of a stored scope, for admission; null when it has neither a max nor a soft budget. */
export function scopeBudget(fields: BudgetFields): ScopeBudget | null {
  if (fields.max_budget === null && fields.soft_budget === null) return null;
  return Object.freeze({
    maxMicros: fields.max_budget === null ? null : toMicros(fields.max_budget),
    softMicros: fields.soft_budget === null ? null : toMicros(fields.soft_budget),
    durationMs: fields.budget_duration === null ? 0 : (budgetDurationMs(fields.budget_duration) ?? 0),
  });
}
