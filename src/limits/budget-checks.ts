/**
 * Spend budgets at admission: which budget counters a caller's scopes check (organization, team, user,
 * key), the reservation an admission holds on them, the 429 of a budget that spend and reservations
 * leave no room in, the `x-switchboard-budget-warning` header of a soft budget reached, and the charges
 * a settled cost adds to every budgeted scope.
 */
import { toMicros } from '../canonical/budget-window.ts';
import type { Caller, ScopeBudget, ScopeKind } from '../canonical/caller.ts';
import { ErrorType } from '../lib/error-catalogue.ts';
import { GatewayError } from '../lib/gateway-error.ts';
import type { BudgetCharge, BudgetCheck, ReservationLease } from '../store/shared/rate-limit-counters.ts';

export type BudgetScopeName = 'organization' | 'team' | 'user' | 'key';

export interface PlannedBudget {
  scope: BudgetScopeName;
  id: string;
  /** `key_budget`, `organization_budget` …: error.param, and `<name>_exceeded` is error.code. */
  name: string;
  budget: ScopeBudget;
}

/** A caller's budgets and the store checks they make, computed once per (cached, frozen) Caller. */
export interface BudgetPlan {
  planned: readonly PlannedBudget[];
  checks: readonly BudgetCheck[];
}

const scopeNames: Record<ScopeKind, BudgetScopeName> = {
  org: 'organization',
  team: 'team',
  user: 'user',
  key: 'key',
};
const scopeLabels: Record<BudgetScopeName, string> = {
  organization: 'organization',
  team: 'team',
  user: 'user',
  key: 'API key',
};

export const BUDGET_WARNING_HEADER = 'x-switchboard-budget-warning';
const noBudgets: BudgetPlan = Object.freeze({ planned: [], checks: [] });
const plans = new WeakMap<Caller, BudgetPlan>();

/** The shared-store key (without its window suffix) of a scope's spend counter. */
export function budgetCounterKey(kind: ScopeKind, id: string): string {
  return `bg:${kind}:${id}`;
}

/** The caller's budgets; callers are frozen and cached by the authenticator, so this rarely allocates. */
export function planBudgets(caller: Caller): BudgetPlan {
  if (caller.kind === 'master') return noBudgets;
  let plan = plans.get(caller);
  if (plan) return plan;
  const planned: PlannedBudget[] = [];
  for (const scope of caller.scopes) {
    if (!scope.budget) continue;
    const name = scopeNames[scope.kind];
    planned.push({ scope: name, id: scope.id, name: `${name}_budget`, budget: scope.budget });
  }
  plan =
    planned.length === 0
      ? noBudgets
      : Object.freeze({
          planned,
          checks: caller.scopes
            .filter((scope) => scope.budget)
            .map((scope) => ({
              key: budgetCounterKey(scope.kind, scope.id),
              durationMs: scope.budget!.durationMs,
              limit: scope.budget!.maxMicros,
            })),
        });
  plans.set(caller, plan);
  return plan;
}

/** What a settled cost (USD; null or undefined: unknown) adds to each budget; none when nothing. */
export function budgetCharges(plan: BudgetPlan, cost: number | null | undefined): BudgetCharge[] | undefined {
  if (plan.checks.length === 0 || cost === null || cost === undefined) return undefined;
  const amount = toMicros(cost);
  if (amount === 0) return undefined;
  return plan.checks.map((check) => ({ key: check.key, durationMs: check.durationMs, amount }));
}

/** Micro-USD reserved for an estimated cost in USD: rounded up, so a reservation never falls short of it. */
export function reservationMicros(usd: number | undefined): number {
  return usd !== undefined && Number.isFinite(usd) && usd > 0 ? Math.ceil(usd * 1_000_000) : 0;
}

/** The leases a reservation of `amount` micro-USD holds: one on each budget with a limit. */
export function reservationLeases(plan: BudgetPlan, member: string, amount: number): ReservationLease[] {
  if (amount <= 0) return [];
  return plan.checks
    .filter((check) => check.limit !== null)
    .map((check) => ({ key: check.key, member, amount }));
}

export interface ReachedBudget {
  item: PlannedBudget;
  spent: number;
}

/** Each scope whose spend is at or above its soft budget; undefined when none (no allocation). */
export function softBudgetsReached(plan: BudgetPlan, spent: readonly number[]): ReachedBudget[] | undefined {
  let reached: ReachedBudget[] | undefined;
  for (let index = 0; index < plan.planned.length; index++) {
    const item = plan.planned[index]!;
    const soft = item.budget.softMicros;
    const value = spent[index] ?? 0;
    if (soft === null || value < soft) continue;
    reached ??= [];
    reached.push({ item, spent: value });
  }
  return reached;
}

/** The header value: `key=12.5/10,team=3/2` (spent/soft_budget in USD, per scope). */
export function budgetWarningValue(reached: readonly ReachedBudget[]): string {
  return reached
    .map(({ item, spent }) => `${item.scope}=${usd(spent)}/${usd(item.budget.softMicros ?? 0)}`)
    .join(',');
}

/** Where a budget stood when it refused a request (micro-USD). */
export interface BudgetStanding {
  spent: number;
  /** Reservations of requests in flight. */
  reserved: number;
  /** What this request would have reserved. */
  needed: number;
}

/**
 * The 429 of a budget that spend and reservations in flight leave no room in: retry-after is the
 * seconds to the window's end; a lifetime budget never resets by itself, so it gets no retry-after and
 * `x-should-retry: false`.
 */
export function budgetRejection(
  item: PlannedBudget,
  standing: BudgetStanding,
  reset: number,
  now: number,
  headers: Readonly<Record<string, string>>,
): GatewayError {
  const lifetime = item.budget.durationMs <= 0 || reset <= 0;
  const retryAfter = lifetime ? undefined : Math.max(1, Math.ceil((reset - now) / 1000));
  const next = lifetime
    ? 'It is a lifetime budget: raise max_budget to continue.'
    : `The budget resets at ${new Date(reset).toISOString()}; retry after ${retryAfter} s.`;
  const held = standing.reserved > 0 ? ` (and $${usd(standing.reserved)} held by requests in flight)` : '';
  const needed =
    standing.needed > 0
      ? ` This request may cost up to $${usd(standing.needed)}; a lower max_tokens reserves less.`
      : '';
  return new GatewayError({
    status: 429,
    type: ErrorType.rateLimit,
    code: `${item.name}_exceeded`,
    param: item.name,
    message: `Budget exceeded for the ${scopeLabels[item.scope]}: spent $${usd(standing.spent)}${held} of max_budget $${usd(item.budget.maxMicros ?? 0)} (${item.name}).${needed} ${next}`,
    ...(retryAfter !== undefined ? { retryAfter } : {}),
    headers: lifetime ? { ...headers, 'x-should-retry': 'false' } : headers,
  });
}

/** Micro-USD as a plain decimal USD amount (`12.5`, `0.000123`). */
export function usd(micros: number): string {
  return String(micros / 1_000_000);
}
