/**
 * Keeps budget counters in the shared store at least as high as the spend the database recorded: on
 * start and every interval, each budgeted scope's current-window counter is raised to the sum of
 * spend_logs in that window when the sum is higher (a counter is never lowered: it may hold charges
 * not written yet). Restores counters after a Redis loss, a flush, or a change of budget_duration.
 */
import type { Kysely } from 'kysely';
import { budgetDurationMs, budgetWindow, toMicros } from '../canonical/budget-window.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../observability/logger.ts';
import {
  type BudgetedScope,
  type BudgetScopeKind,
  BudgetSpendRepository,
} from '../store/db/repositories/budget-spend-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { BudgetCharge } from '../store/shared/rate-limit-counters.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';
import { budgetCounterKey } from './budget-checks.ts';

export interface BudgetReconcilerOptions {
  /** The database holding the identities (which scopes have budgets). */
  db: Kysely<DatabaseSchema>;
  /** The database holding spend_logs (the telemetry database; the main one by default). */
  spendDb?: Kysely<DatabaseSchema>;
  store: SharedStore;
  clock: Clock;
  /** 0 reconciles only at start. */
  intervalMs: number;
  logger: Logger;
}

/** Counters raised per settle round trip. */
const BATCH = 500;

export class BudgetReconciler {
  private readonly options: BudgetReconcilerOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(options: BudgetReconcilerOptions) {
    this.options = options;
  }

  /** Reconciles once (failures are logged, never thrown), then every interval. */
  async start(): Promise<void> {
    await this.runLogged();
    if (this.options.intervalMs > 0 && !this.timer) {
      this.timer = setInterval(() => void this.runLogged(), this.options.intervalMs).unref();
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  /** One pass; resolves to the number of counters sent to the store (each raised only if lower). */
  async reconcile(): Promise<number> {
    const { db, spendDb, store, clock } = this.options;
    const scopes = await new BudgetSpendRepository(db).budgetedScopes();
    if (scopes.length === 0) return 0;
    const spend = new BudgetSpendRepository(spendDb ?? db);
    const now = clock.now();
    const charges: BudgetCharge[] = [];
    for (const group of groupByWindow(scopes).values()) {
      const window = budgetWindow(group.durationMs, now);
      const ids = group.scopes.map((scope) => scope.id);
      const totals = await spend.spendBetween(group.kind, ids, window.start, window.end);
      for (const [id, total] of totals) {
        const amount = toMicros(total);
        if (amount === 0) continue;
        charges.push({
          key: budgetCounterKey(group.kind, id),
          durationMs: group.durationMs,
          amount,
          raiseInWindow: window.index,
        });
      }
    }
    for (let from = 0; from < charges.length; from += BATCH) {
      await store.settle({ adjustments: [], budgets: charges.slice(from, from + BATCH) });
    }
    return charges.length;
  }

  private runLogged(): Promise<number> {
    if (this.running) return this.running;
    this.running = this.reconcile()
      .catch((error: unknown) => {
        this.options.logger.warn(
          { err: error },
          'budget reconciliation failed; counters keep their values until the next pass',
        );
        return 0;
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }
}

/** Scopes of one kind and one window length are summed by one query. */
function groupByWindow(
  scopes: readonly BudgetedScope[],
): Map<string, { kind: BudgetScopeKind; durationMs: number; scopes: BudgetedScope[] }> {
  const groups = new Map<string, { kind: BudgetScopeKind; durationMs: number; scopes: BudgetedScope[] }>();
  for (const scope of scopes) {
    const durationMs = scope.budget_duration === null ? 0 : (budgetDurationMs(scope.budget_duration) ?? 0);
    const name = `${scope.kind}:${durationMs}`;
    const group = groups.get(name);
    if (group) group.scopes.push(scope);
    else groups.set(name, { kind: scope.kind, durationMs, scopes: [scope] });
  }
  return groups;
}
