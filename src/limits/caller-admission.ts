/**
 * Identity admission: one atomic round trip to the shared store checks every configured scope and
 * window (and max_parallel_requests) before the provider is called; a rejected request changes no
 * counter. The answer is rate-limit headers and a ticket whose settlement corrects token counters with
 * the real usage, adds the request's cost to every budgeted scope's spend and releases the in-flight
 * slot, in one more round trip, off the response path. Budgets are read in the admission round trip too.
 * While Redis is unreachable, `fail_open` uses this process's counters and `fail_closed` answers 503.
 * Output-token counters of text requests are read in the same round trip (output-checks.ts); the
 * ticket's OutputRecorder then records each provider attempt's output.
 */

import { randomUUID } from 'node:crypto';
import { budgetWindow } from '../canonical/budget-window.ts';
import type { Caller } from '../canonical/caller.ts';
import type { GatewayError } from '../lib/gateway-error.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import {
  type AdmissionResponse,
  type CounterAdjustment,
  windowKey,
} from '../store/shared/rate-limit-counters.ts';
import { type SharedStore, SharedStoreUnavailableError } from '../store/shared/shared-store.ts';
import {
  BUDGET_WARNING_HEADER,
  type BudgetPlan,
  budgetCharges,
  budgetRejection,
  budgetWarningValue,
  planBudgets,
  type ReachedBudget,
  softBudgetsReached,
} from './budget-checks.ts';
import { type PlannedCheck, planChecks } from './limit-checks.ts';
import { type PlannedOutput, planOutputChecks } from './output-checks.ts';
import { OutputEpochSeen } from './output-epoch.ts';
import { outputRefusalError, sendGoverned } from './output-errors.ts';
import { OutputRecorder } from './output-recorder.ts';
import { parallelLimitError, rateLimitError, storeUnavailable } from './rate-limit-errors.ts';
import { rateLimitHeaders } from './rate-limit-headers.ts';
import type { RejectionCounter } from './rejection-counter.ts';
import type { TierPolicySource } from './tier-policies.ts';

export interface AdmissionInput {
  caller: Caller;
  model: string;
  tokenEstimate: number;
  requestId: string;
  /** Minute usage counters to read in the same round trip (deployment capacity). */
  reads: readonly string[];
  /** A text request: output-token limits apply (other endpoints' tokens are excluded, spec rule 2). */
  countsOutput?: boolean;
}

export interface AdmissionTicket {
  readonly headers: Readonly<Record<string, string>>;
  readonly reads: readonly number[];
  /**
   * Reports the real token use, adds `adjustments`, adds `cost` (USD; null or undefined: unknown, adds
   * nothing) to the spend of every budgeted scope, and releases the slot, in one round trip. Resolves
   * when the store has taken it (or failed to: failures are logged and counted, never thrown).
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

export interface SettleOutcome {
  totalTokens?: number | undefined;
  adjustments?: readonly CounterAdjustment[];
  /** The request's cost in USD; null or undefined when unknown (adds nothing to budgets). */
  cost?: number | null | undefined;
}

/** A check charged by this request, and when (the window it counted in). */
interface Charged {
  planned: PlannedCheck;
  at: number;
}

export interface CallerAdmissionOptions {
  store: SharedStore;
  /** Per-process counters for fail_open while the shared store is down. */
  fallback: SharedStore;
  degradedMode: 'fail_open' | 'fail_closed';
  metrics: Metrics;
  logger: Logger;
  /** Longest a max_parallel_requests slot is held if its process dies (the request deadline). */
  slotLeaseMs: number;
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

  constructor(options: CallerAdmissionOptions) {
    this.options = options;
  }

  async admit(input: AdmissionInput): Promise<AdmissionTicket> {
    const { caller } = input;
    const planned = caller.kind === 'master' ? [] : planChecks(caller, input.model, input.tokenEstimate);
    const slotLimit = caller.kind === 'master' ? null : caller.maxParallelRequests;
    const budgets = planBudgets(caller);
    const outputs = input.countsOutput ? planOutputChecks(caller, input.model, this.options.tiers) : [];
    if (
      planned.length === 0 &&
      slotLimit === null &&
      input.reads.length === 0 &&
      budgets.checks.length === 0 &&
      outputs.length === 0
    ) {
      // fail_closed refuses every request while the store is down, also those with nothing to count.
      if (this.options.degradedMode === 'fail_closed' && !this.options.store.isAvailable()) {
        this.options.metrics.rateLimitStoreErrors.inc();
        throw storeUnavailable();
      }
      return caller.kind === 'master' || !hasModelLimits(caller) ? emptyTicket : this.uncountedTicket(input);
    }
    const slot =
      slotLimit !== null && caller.keyId !== null
        ? {
            key: `rl:key:${caller.keyId}:parallel`,
            limit: slotLimit,
            // Unique per admission: a caller chooses its x-request-id, and reusing one must not share a slot.
            member: `${input.requestId}:${randomUUID()}`,
            leaseMs: this.options.slotLeaseMs,
          }
        : undefined;
    const request = {
      checks: planned.map((item) => item.check),
      reads: input.reads,
      ...(slot ? { slot } : {}),
      ...(budgets.checks.length > 0 ? { budgets: budgets.checks } : {}),
      ...(outputs.length > 0
        ? {
            outputs: outputs.map((item) => item.check),
            epochId: randomUUID(),
            ...(this.epoch.current ? { epochSeen: this.epoch.current } : {}),
          }
        : {}),
    };
    const { response, store } =
      outputs.length > 0
        ? await sendGoverned(this.options.store, this.options.metrics, (target) => target.admit(request))
        : await this.send((target) => target.admit(request));
    if (!response.admitted)
      throw this.rejection(planned, response, slot?.limit, budgets, outputs, caller.organizationId);
    this.countDecisions(planned, 'allowed');
    const headers = rateLimitHeaders(
      planned.map((item, index) => ({
        planned: item,
        count: response.counts[index]!,
        reset: response.resets[index]!,
      })),
    );
    let output: OutputRecorder | undefined;
    if (outputs.length > 0) {
      this.options.metrics.outputTpmEvents.inc({ event: 'admitted' });
      output = new OutputRecorder({
        store,
        planned: outputs,
        admitted: { counts: response.outputs, now: response.now },
        metrics: this.options.metrics,
        logger: this.options.logger,
        epoch: this.epoch,
      });
    }
    const reached = budgets.checks.length > 0 ? softBudgetsReached(budgets, response.spent) : undefined;
    if (reached) {
      headers[BUDGET_WARNING_HEADER] = budgetWarningValue(reached);
      this.warnOnce(reached, response.now);
    }
    const charged: Charged[] = planned.map((item) => ({ planned: item, at: response.now }));
    return {
      headers,
      reads: response.reads,
      settle: (outcome) => this.settle(store, charged, input.tokenEstimate, slot, outcome, budgets),
      admitModel: (model) => this.admitModel(input, model, charged),
      ...(output ? { output } : {}),
    };
  }

  /** Nothing counted at admission, but per-model limits may apply to a fallback group. */
  private uncountedTicket(input: AdmissionInput): AdmissionTicket {
    const charged: Charged[] = [];
    return {
      headers: {},
      reads: [],
      settle: (outcome) =>
        charged.length === 0
          ? Promise.resolve()
          : this.settle(this.options.store, charged, input.tokenEstimate, undefined, outcome, undefined),
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
    const { response } = await this.send((target) =>
      target.admit({ checks: planned.map((item) => item.check), reads: [] }),
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

  /** Sends to the shared store, or, while it is unreachable, to the fallback (fail_open) or nowhere. */
  private async send<T>(
    operation: (store: SharedStore) => Promise<T>,
  ): Promise<{ response: T; store: SharedStore }> {
    const { store, fallback, metrics, degradedMode } = this.options;
    if (store.isAvailable()) {
      try {
        const response = await operation(store);
        metrics.rateLimitDegraded.set(0);
        return { response, store };
      } catch (error) {
        if (!(error instanceof SharedStoreUnavailableError)) throw error;
      }
    }
    metrics.rateLimitStoreErrors.inc();
    if (degradedMode === 'fail_closed') throw storeUnavailable();
    metrics.rateLimitDegraded.set(1);
    return { response: await operation(fallback), store: fallback };
  }

  private settle(
    store: SharedStore,
    charged: readonly Charged[],
    estimate: number,
    slot: { key: string; member: string } | undefined,
    outcome: SettleOutcome,
    budgets: BudgetPlan | undefined,
  ): Promise<void> {
    const adjustments: CounterAdjustment[] = [...(outcome.adjustments ?? [])];
    if (outcome.totalTokens !== undefined && outcome.totalTokens !== estimate) {
      for (const { planned: item, at } of charged) {
        if (item.counts !== 'tokens') continue;
        adjustments.push({
          key: windowKey(item.check, at),
          window: item.check.window,
          delta: outcome.totalTokens - estimate,
        });
      }
    }
    const charges = budgets && budgetCharges(budgets, outcome.cost);
    if (adjustments.length === 0 && !slot && !charges) return Promise.resolve();
    return store
      .settle({
        adjustments,
        ...(slot ? { release: { key: slot.key, member: slot.member } } : {}),
        ...(charges ? { budgets: charges } : {}),
      })
      .catch((error: unknown) => {
        this.options.metrics.rateLimitStoreErrors.inc();
        this.options.logger.warn(
          { err: error },
          'rate-limit settlement failed; counters keep the estimate until their window ends',
        );
      });
  }

  private rejection(
    planned: readonly PlannedCheck[],
    response: Extract<AdmissionResponse, { admitted: false }>,
    slotLimit: number | undefined,
    budgets: BudgetPlan,
    outputs: readonly PlannedOutput[],
    organizationId: string | null,
  ): GatewayError {
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
      return budgetRejection(overBudget, response.count, response.reset, response.now, headers);
    }
    const retryAfter = Math.max(1, Math.ceil((response.reset - response.now) / 1000));
    const failed = planned[response.failed];
    count('rate_limit');
    if (!failed) {
      this.options.metrics.rateLimitDecisions.inc('key', 'parallel', 'rejected');
      return parallelLimitError(response.count, slotLimit, rateLimitHeaders([], planned));
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

const emptyTicket: AdmissionTicket = Object.freeze({
  headers: {},
  reads: [],
  settle: () => Promise.resolve(),
  admitModel: () => Promise.resolve(true),
});

function hasModelLimits(caller: Caller): boolean {
  return caller.scopes.some((scope) => scope.limits.model_rpm_limit || scope.limits.model_tpm_limit);
}
