/**
 * Identity admission: one atomic round trip to the shared store checks every configured scope and
 * window (and max_parallel_requests) before the provider is called; a rejected request changes no
 * counter. Budgets are checked in the same round trip, which also reserves the request's estimated cost
 * on them. The answer is rate-limit headers and a ticket whose settlement corrects token counters with
 * the real usage, replaces the reservation by the request's cost and releases the in-flight slot, in one
 * more round trip, off the response path (ticket-settlement.ts); until then the lease keeper renews the
 * slot and reservation. While Redis is down (store-health.ts), `fail_open` uses this process's counters
 * and `fail_closed` answers 503. Output-token counters of text requests are read in the same round trip
 * (output-checks.ts); the ticket's OutputRecorder then records each provider attempt's output.
 */

import { randomUUID } from 'node:crypto';
import { budgetWindow } from '../canonical/budget-window.ts';
import type { Caller } from '../canonical/caller.ts';
import type { GeneralSettings } from '../config/config.ts';
import { type Clock, systemClock } from '../lib/clock.ts';
import type { GatewayError } from '../lib/gateway-error.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { MemorySharedStore } from '../store/shared/memory-shared-store.ts';
import type { AdmissionRequest, AdmissionResponse, LeaseSet } from '../store/shared/rate-limit-counters.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';
import { AdmissionSender } from './admission-sender.ts';
import {
  BUDGET_WARNING_HEADER,
  type BudgetPlan,
  budgetRejection,
  budgetWarningValue,
  planBudgets,
  type ReachedBudget,
  reservationLeases,
  reservationMicros,
  softBudgetsReached,
} from './budget-checks.ts';
import { LeaseKeeper } from './lease-keeper.ts';
import { type PlannedCheck, planChecks } from './limit-checks.ts';
import { type PlannedOutput, planOutputChecks } from './output-checks.ts';
import { OutputEpochSeen } from './output-epoch.ts';
import { outputRefusalError } from './output-errors.ts';
import { OutputRecorder } from './output-recorder.ts';
import { parallelLimitError, rateLimitError, storeUnavailable } from './rate-limit-errors.ts';
import { rateLimitHeaders } from './rate-limit-headers.ts';
import type { RejectionCounter } from './rejection-counter.ts';
import { StoreHealth } from './store-health.ts';
import { type Charged, type SettleOutcome, TicketSettlement } from './ticket-settlement.ts';
import type { TierPolicySource } from './tier-policies.ts';

export type { SettleOutcome } from './ticket-settlement.ts';

export interface AdmissionInput {
  caller: Caller;
  model: string;
  tokenEstimate: number;
  requestId: string;
  /** Minute usage counters to read in the same round trip (deployment capacity). */
  reads: readonly string[];
  /** A text request: output-token limits apply (other endpoints' tokens are excluded, spec rule 2). */
  countsOutput?: boolean;
  /**
   * The request's estimated cost (USD), reserved on every budget with a limit until settlement; the
   * admission is refused when spend, reservations in flight and this would pass a budget.
   */
  reservationUsd?: number;
}

export interface AdmissionTicket {
  readonly headers: Readonly<Record<string, string>>;
  readonly reads: readonly number[];
  /**
   * Reports the real token use, adds `adjustments`, adds `cost` (USD; null or undefined: unknown, adds
   * nothing) to the spend of every budgeted scope, and releases the slot and the budget reservation (the
   * cost replaces it), in one round trip. Resolves when the store has taken it (or failed to: failures
   * are logged and counted, never thrown).
   */
  settle(outcome: SettleOutcome): Promise<void>;
  /**
   * Charges the caller's per-model limits of another model group (a fallback the router moves to), in
   * one round trip; false when one of them is exhausted, and then nothing is charged. Settlement
   * corrects these counters too.
   */
  admitModel(model: string): Promise<boolean>;
  /**
   * Output-token accounting of a request that output limits govern; absent otherwise. Its `headers`
   * (admission snapshot, then each recording) complete `headers`, which carry no output headers.
   */
  readonly output?: OutputRecorder;
}

export type AdmissionSettings = Pick<
  GeneralSettings,
  'redis_degraded_mode' | 'budget_reservation_default_max_tokens'
>;

export interface CallerAdmissionOptions {
  store: SharedStore;
  /** Per-process counters for fail_open while the shared store is down (default: `store` if in memory, else new ones). */
  fallback?: SharedStore;
  /** The general settings admission follows. */
  settings: AdmissionSettings;
  metrics: Metrics;
  logger: Logger;
  /** Times lease renewals (default: the system clock). */
  clock?: Clock;
  /** Renews slots and reservations while requests are in flight (default: one that is never started). */
  leases?: LeaseKeeper;
  /** When the shared store counts as down (default: one on `store`). */
  health?: StoreHealth;
  /** Tier output limits (organization + model); applied only while they enforce. */
  tiers?: TierPolicySource;
  /** Counts refusals for the console (on the refusal path only). */
  rejections?: Pick<RejectionCounter, 'record'>;
}

/** The metric event of each output refusal: 429, 503 output_tpm_usage_unknown, 503 output_tpm_unavailable. */
const refusalEvents = { exceeded: 'denied', unknown: 'unknown_usage', unavailable: 'unavailable' } as const;

/** Soft-budget warnings logged: scope → window index, so each is logged once per window per process. */
const MAX_WARNED = 10_000;

export class CallerAdmission {
  private readonly options: CallerAdmissionOptions;
  private readonly warned = new Map<string, number>();
  private readonly epoch = new OutputEpochSeen();
  private readonly leases: LeaseKeeper;
  private readonly health: StoreHealth;
  private readonly sender: AdmissionSender;
  private readonly settlement: TicketSettlement;

  constructor(options: CallerAdmissionOptions) {
    this.options = options;
    const { store, metrics, logger } = options;
    const clock = options.clock ?? systemClock;
    this.leases = options.leases ?? new LeaseKeeper({ clock, logger });
    const degradedMode = options.settings.redis_degraded_mode;
    this.health = options.health ?? new StoreHealth({ store, degradedMode, logger, metrics });
    const fallback = options.fallback ?? (store.kind === 'memory' ? store : new MemorySharedStore(clock));
    this.sender = new AdmissionSender({ ...options, degradedMode, fallback, health: this.health });
    this.settlement = new TicketSettlement({ ...options, leases: this.leases, health: this.health });
  }

  /**
   * The output tokens a text request without max_tokens is reserved for against budgets
   * (general_settings.budget_reservation_default_max_tokens).
   */
  get reservedOutputTokens(): number {
    return this.options.settings.budget_reservation_default_max_tokens;
  }

  /** Stops renewing leases and probing the store (at shutdown, before the store closes). */
  close(): void {
    this.leases.stop();
    this.health.stop();
  }

  async admit(input: AdmissionInput): Promise<AdmissionTicket> {
    const { caller } = input;
    const plan = this.plan(input);
    if (!plan) {
      // fail_closed refuses every request while the store is down, also those with nothing to count.
      if (this.options.settings.redis_degraded_mode === 'fail_closed' && this.health.isDown()) {
        this.options.metrics.rateLimitStoreErrors.inc();
        throw storeUnavailable();
      }
      return caller.kind === 'master' || !hasModelLimits(caller) ? emptyTicket : this.uncountedTicket(input);
    }
    const { planned, budgets, outputs, request } = plan;
    const { response, store } =
      outputs.length > 0
        ? await this.sender.sendGoverned((target, signal) => target.admit({ ...request, signal }))
        : await this.sender.send((target, signal) => target.admit({ ...request, signal }));
    if (!response.admitted) {
      throw this.rejection(plan, response, caller.organizationId);
    }
    this.countDecisions(planned, 'allowed');
    const headers = rateLimitHeaders(
      planned.map((item, index) => ({
        planned: item,
        count: response.counts[index]!,
        reset: response.resets[index]!,
      })),
    );
    const reached = budgets.checks.length > 0 ? softBudgetsReached(budgets, response.spent) : undefined;
    if (reached) {
      headers[BUDGET_WARNING_HEADER] = budgetWarningValue(reached);
      this.warnOnce(reached, response.now);
    }
    const output = outputs.length > 0 ? this.outputRecorder(store, outputs, response) : undefined;
    const charged: Charged[] = planned.map((item) => ({ planned: item, at: response.now }));
    const holding = {
      store,
      charged,
      estimate: input.tokenEstimate,
      budgets,
      leases: plan.leases,
      endHold: plan.leases && this.leases.hold(store, plan.leases),
    };
    return {
      headers,
      reads: response.reads,
      settle: (outcome) => this.settlement.settle(holding, outcome),
      admitModel: (model) => this.admitModel(input, model, charged),
      ...(output ? { output } : {}),
    };
  }

  /** What an admission checks, and the request that checks it in one round trip; none: nothing to count. */
  private plan(input: AdmissionInput): AdmissionPlan | undefined {
    const { caller } = input;
    const planned = caller.kind === 'master' ? [] : planChecks(caller, input.model, input.tokenEstimate);
    const slotLimit = caller.kind === 'master' || caller.keyId === null ? null : caller.maxParallelRequests;
    const budgets = planBudgets(caller);
    const outputs = input.countsOutput ? planOutputChecks(caller, input.model, this.options.tiers) : [];
    if (
      planned.length === 0 &&
      slotLimit === null &&
      input.reads.length === 0 &&
      budgets.checks.length === 0 &&
      outputs.length === 0
    ) {
      return undefined;
    }
    // Unique per admission: a caller chooses its x-request-id, and reusing one must not share a lease.
    const member = `${input.requestId}:${randomUUID()}`;
    const leaseMs = this.leases.leaseMs;
    const slot =
      slotLimit !== null
        ? { key: `rl:key:${caller.keyId}:parallel`, limit: slotLimit, member, leaseMs }
        : undefined;
    const amount = budgets.checks.length > 0 ? reservationMicros(input.reservationUsd) : 0;
    const reservations = reservationLeases(budgets, member, amount);
    const leases: LeaseSet | undefined =
      slot || reservations.length > 0
        ? { slots: slot ? [{ key: slot.key, member }] : [], reservations }
        : undefined;
    const request = {
      checks: planned.map((item) => item.check),
      reads: input.reads,
      ...(slot ? { slot } : {}),
      ...(budgets.checks.length > 0 ? { budgets: budgets.checks } : {}),
      ...(reservations.length > 0 ? { reservation: { member, amount, leaseMs } } : {}),
      ...(outputs.length > 0
        ? {
            outputs: outputs.map((item) => item.check),
            epochId: randomUUID(),
            ...(this.epoch.current ? { epochSeen: this.epoch.current } : {}),
          }
        : {}),
    };
    return { planned, slot, budgets, amount, outputs, leases, request };
  }

  private outputRecorder(
    store: SharedStore,
    outputs: readonly PlannedOutput[],
    response: Extract<AdmissionResponse, { admitted: true }>,
  ): OutputRecorder {
    this.options.metrics.outputTpmEvents.inc({ event: 'admitted' });
    return new OutputRecorder({
      store,
      planned: outputs,
      admitted: { counts: response.outputs, now: response.now },
      metrics: this.options.metrics,
      logger: this.options.logger,
      epoch: this.epoch,
    });
  }

  /** Nothing counted at admission, but per-model limits may apply to a fallback group. */
  private uncountedTicket(input: AdmissionInput): AdmissionTicket {
    const charged: Charged[] = [];
    const holding = {
      store: this.options.store,
      charged,
      estimate: input.tokenEstimate,
      budgets: undefined,
      leases: undefined,
      endHold: undefined,
    };
    return {
      headers: {},
      reads: [],
      settle: (outcome) =>
        charged.length === 0 ? Promise.resolve() : this.settlement.settle(holding, outcome),
      admitModel: (model) => this.admitModel(input, model, charged),
    };
  }

  /** Per-model checks of a fallback group; admitted ones join the request's charge. */
  private async admitModel(input: AdmissionInput, model: string, charged: Charged[]): Promise<boolean> {
    if (input.caller.kind === 'master') return true;
    const planned = planChecks(input.caller, model, input.tokenEstimate).filter(
      (item) => item.dimension === 'model_rpm' || item.dimension === 'model_tpm',
    );
    if (planned.length === 0) return true;
    const { response } = await this.sender.send((target, signal) =>
      target.admit({ checks: planned.map((item) => item.check), reads: [], signal }),
    );
    if (!response.admitted) {
      const failed = planned[response.failed];
      if (failed) this.options.metrics.rateLimitDecisions.inc(failed.scope, failed.dimension, 'rejected');
      return false;
    }
    this.countDecisions(planned, 'allowed');
    for (const item of planned) charged.push({ planned: item, at: response.now });
    return true;
  }

  private rejection(
    plan: AdmissionPlan,
    response: Extract<AdmissionResponse, { admitted: false }>,
    organizationId: string | null,
  ): GatewayError {
    const { planned, budgets, outputs } = plan;
    const count = (kind: 'rate_limit' | 'budget') => this.options.rejections?.record(kind, organizationId);
    if (response.output) {
      this.options.metrics.outputTpmEvents.inc({ event: refusalEvents[response.output.state] });
      if (response.output.state === 'exceeded') count('rate_limit');
      return outputRefusalError(outputs, response.output, response.now, rateLimitHeaders([], planned));
    }
    const overBudget = budgets.planned[response.failed - planned.length - 1];
    if (overBudget) {
      this.options.metrics.budgetRejections.inc({ scope: overBudget.scope });
      count('budget');
      const headers = rateLimitHeaders([], planned);
      const standing = { spent: response.count, reserved: response.reserved ?? 0, needed: plan.amount };
      return budgetRejection(overBudget, standing, response.reset, response.now, headers);
    }
    const retryAfter = Math.max(1, Math.ceil((response.reset - response.now) / 1000));
    const failed = planned[response.failed];
    count('rate_limit');
    if (!failed) {
      this.options.metrics.rateLimitDecisions.inc('key', 'parallel', 'rejected');
      return parallelLimitError(response.count, plan.slot?.limit, rateLimitHeaders([], planned));
    }
    this.options.metrics.rateLimitDecisions.inc(failed.scope, failed.dimension, 'rejected');
    const headers = rateLimitHeaders(
      [{ planned: failed, count: response.count, reset: response.reset }],
      planned,
    );
    return rateLimitError(failed, retryAfter, headers);
  }

  /** Logs a soft budget reached once per scope and window in this process. */
  private warnOnce(reached: readonly ReachedBudget[], now: number): void {
    for (const { item, spent } of reached) {
      const scope = `${item.scope}:${item.id}`;
      const window = budgetWindow(item.budget.durationMs, now).index;
      if (this.warned.get(scope) === window) continue;
      if (this.warned.size >= MAX_WARNED) this.warned.clear();
      this.warned.set(scope, window);
      this.options.logger.warn(
        {
          scope: item.scope,
          id: item.id,
          spentUsd: spent / 1e6,
          softBudgetUsd: (item.budget.softMicros ?? 0) / 1e6,
        },
        `soft budget reached (${item.name})`,
      );
    }
  }

  private countDecisions(planned: readonly PlannedCheck[], outcome: 'allowed'): void {
    for (const item of planned)
      this.options.metrics.rateLimitDecisions.inc(item.scope, item.dimension, outcome);
  }
}

/** What an admission checks (see CallerAdmission.plan). */
interface AdmissionPlan {
  planned: readonly PlannedCheck[];
  slot: { key: string; limit: number } | undefined;
  budgets: BudgetPlan;
  /** The reservation in micro-USD (0: none). */
  amount: number;
  outputs: readonly PlannedOutput[];
  leases: LeaseSet | undefined;
  request: AdmissionRequest;
}

const emptyTicket: AdmissionTicket = Object.freeze({
  headers: {},
  reads: [],
  settle: () => Promise.resolve(),
  admitModel: () => Promise.resolve(true),
});

function hasModelLimits(caller: Caller): boolean {
  return caller.scopes.some((scope) => scope.limits.model_rpm_limit || scope.limits.model_tpm_limit);
}
