/**
 * The settlement of an admitted request, in one round trip to the store that admitted it: token
 * counters corrected by the real usage, the real cost added to every budgeted scope (replacing the
 * reservation, which is given back), and the slot released. A release the store did not take goes to
 * the lease keeper, which retries it until the store answers again.
 */
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { type CounterAdjustment, type LeaseSet, windowKey } from '../store/shared/rate-limit-counters.ts';
import { type SharedStore, SharedStoreUnavailableError } from '../store/shared/shared-store.ts';
import { type BudgetPlan, budgetCharges } from './budget-checks.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import type { PlannedCheck } from './limit-checks.ts';
import type { StoreHealth } from './store-health.ts';

/** A check charged by a request, and when (the window it counted in). */
export interface Charged {
  planned: PlannedCheck;
  at: number;
}

export interface SettleOutcome {
  totalTokens?: number | undefined;
  adjustments?: readonly CounterAdjustment[];
  /** The request's cost in USD; null or undefined when unknown (adds nothing to budgets). */
  cost?: number | null | undefined;
}

/** What one admitted request holds until it is settled. */
export interface Holding {
  store: SharedStore;
  charged: readonly Charged[];
  /** The token estimate the token counters were charged. */
  estimate: number;
  budgets: BudgetPlan | undefined;
  /** Its slot and reservations, renewed by the lease keeper until `endHold`. */
  leases: LeaseSet | undefined;
  endHold: (() => void) | undefined;
}

export interface TicketSettlementOptions {
  leases: LeaseKeeper;
  health: StoreHealth;
  /** The shared store (the health of which settlements report). */
  store: SharedStore;
  metrics: Metrics;
  logger: Logger;
}

export class TicketSettlement {
  private readonly options: TicketSettlementOptions;

  constructor(options: TicketSettlementOptions) {
    this.options = options;
  }

  /** Resolves when the store has taken it (or failed to: failures are logged and counted, never thrown). */
  settle(holding: Holding, outcome: SettleOutcome): Promise<void> {
    holding.endHold?.();
    const adjustments: CounterAdjustment[] = [...(outcome.adjustments ?? [])];
    if (outcome.totalTokens !== undefined && outcome.totalTokens !== holding.estimate) {
      for (const { planned: item, at } of holding.charged) {
        if (item.counts !== 'tokens') continue;
        adjustments.push({
          key: windowKey(item.check, at),
          window: item.check.window,
          delta: outcome.totalTokens - holding.estimate,
        });
      }
    }
    const charges = holding.budgets && budgetCharges(holding.budgets, outcome.cost);
    const { leases, store } = holding;
    if (adjustments.length === 0 && !leases && !charges) return Promise.resolve();
    return store
      .settle({
        adjustments,
        ...(leases ? { release: leases } : {}),
        ...(charges ? { budgets: charges } : {}),
      })
      .then(
        () => {
          if (store === this.options.store) this.options.health.answered();
        },
        (error: unknown) => {
          this.options.metrics.rateLimitStoreErrors.inc();
          if (store === this.options.store && error instanceof SharedStoreUnavailableError) {
            this.options.health.failed(error);
          }
          if (leases) this.options.leases.retryRelease(store, leases);
          this.options.logger.warn(
            { err: error },
            'rate-limit settlement failed; counters keep the estimate until their window ends, and the slot and reservation are released when the store answers again',
          );
        },
      );
  }
}
