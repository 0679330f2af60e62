/**
 * The in-memory twin of the Redis rate-limit scripts: the same validate-then-increment admission,
 * windows, slots, budget reservations, leases and settlement, on process memory (embedded default and
 * fail_open degradation).
 */
import type { Clock } from '../../lib/clock.ts';
import { MemoryLeases } from './memory-leases.ts';
import {
  type AdmissionRequest,
  type AdmissionResponse,
  type BudgetCharge,
  budgetKey,
  MINUTE_MS,
  type SettlementRequest,
  windowEnd,
  windowKey,
} from './rate-limit-counters.ts';
import { OutputCountersUnsupportedError, SharedStoreUnavailableError } from './shared-store.ts';

interface Counter {
  value: number;
  expiresAt: number;
}

type Rejection = Extract<AdmissionResponse, { admitted: false }>;

export class MemoryRateLimiter {
  private readonly clock: Clock;
  private readonly counters = new Map<string, Counter>();
  private readonly leases = new MemoryLeases();
  private sweepAt = 0;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  admit(request: AdmissionRequest): AdmissionResponse {
    // Output policies need the shared Redis store (spec output rule 10): no per-process twin.
    if (request.outputs?.length) throw new OutputCountersUnsupportedError();
    const now = this.clock.now();
    if (request.deadline !== undefined && now > request.deadline) {
      throw new SharedStoreUnavailableError('the admission reached the store after its deadline', 'late');
    }
    this.sweep(now);
    const reads = (request.reads ?? []).map((key) => this.live(key, now)?.value ?? 0);
    const budgets = this.checkBudgets(request, now, reads);
    if (!Array.isArray(budgets)) return budgets;
    const planned: Array<{ key: string; reset: number; ttl: number; current: number }> = [];
    for (let index = 0; index < request.checks.length; index++) {
      const check = request.checks[index]!;
      const key = windowKey(check, now);
      const counter = this.live(key, now);
      const reset =
        check.window === 'minute' ? (counter?.expiresAt ?? now + MINUTE_MS) : windowEnd(check.window, now);
      const current = counter?.value ?? 0;
      if (current + check.amount > check.limit)
        return { admitted: false, now, failed: index, count: current, reset, reads };
      planned.push({ key, reset, ttl: check.window === 'minute' ? MINUTE_MS : reset - now, current });
    }
    const slot = request.slot;
    if (slot) {
      const held = this.leases.slots(slot.key, now);
      if (held.size >= slot.limit) {
        const reset = Math.min(...held.values());
        return { admitted: false, now, failed: request.checks.length, count: held.size, reset, reads };
      }
    }
    const counts = planned.map((plan, index) => {
      const counter = this.live(plan.key, now) ?? { value: 0, expiresAt: now + plan.ttl };
      counter.value += request.checks[index]!.amount;
      this.counters.set(plan.key, counter);
      return counter.value;
    });
    if (slot) this.leases.slots(slot.key, now).set(slot.member, now + slot.leaseMs);
    this.reserve(request, now);
    const resets = planned.map((plan) => plan.reset);
    return { admitted: true, now, counts, resets, reads, spent: budgets, outputs: [] };
  }

  settle(request: SettlementRequest): void {
    const now = this.clock.now();
    for (const adjustment of request.adjustments) {
      const counter = this.live(adjustment.key, now);
      if (counter) counter.value = Math.max(0, counter.value + adjustment.delta);
      else if (adjustment.createMinute && adjustment.delta > 0) {
        this.counters.set(adjustment.key, { value: adjustment.delta, expiresAt: now + MINUTE_MS });
      }
    }
    for (const charge of request.budgets ?? []) this.charge(charge, now);
    if (request.release) this.leases.release(request.release);
    if (request.renew) this.leases.renew(request.renew, now);
  }

  /** A minute counter's value (for tests and diagnostics). */
  read(key: string): number {
    return this.live(key, this.clock.now())?.value ?? 0;
  }

  /** Each budget's spend, or the refusal of the first whose spend and reservations leave no room. */
  private checkBudgets(request: AdmissionRequest, now: number, reads: number[]): number[] | Rejection {
    const budgets = request.budgets ?? [];
    const amount = Math.max(0, Math.round(request.reservation?.amount ?? 0));
    const spent: number[] = [];
    for (let index = 0; index < budgets.length; index++) {
      const budget = budgets[index]!;
      const { key, end } = budgetKey(budget, now);
      const value = this.live(key, now)?.value ?? 0;
      if (budget.limit !== null) {
        const held = value + this.leases.reserved(budget.key, now);
        if (held >= budget.limit || held + amount > budget.limit) {
          const failed = request.checks.length + 1 + index;
          const reserved = held - value;
          const rejection: Rejection = { admitted: false, now, failed, count: value, reset: end ?? 0, reads };
          return reserved > 0 ? { ...rejection, reserved } : rejection;
        }
      }
      spent.push(value);
    }
    return spent;
  }

  /** Holds the admission's reservation on every budget with a limit. */
  private reserve(request: AdmissionRequest, now: number): void {
    const reservation = request.reservation;
    const amount = Math.max(0, Math.round(reservation?.amount ?? 0));
    if (!reservation || amount === 0) return;
    for (const budget of request.budgets ?? []) {
      if (budget.limit === null) continue;
      this.leases.reserve(budget.key, reservation.member, amount, now + reservation.leaseMs);
    }
  }

  /** Adds to a budget counter of the current window, or raises it (reconciliation, same window only). */
  private charge(charge: BudgetCharge, now: number): void {
    const { key, index, end } = budgetKey(charge, now);
    if (charge.raiseInWindow !== undefined && charge.raiseInWindow !== index) return;
    let counter = this.live(key, now);
    if (!counter) {
      counter = { value: 0, expiresAt: end ?? Number.POSITIVE_INFINITY };
      this.counters.set(key, counter);
    }
    const amount = Math.round(charge.amount);
    counter.value =
      charge.raiseInWindow === undefined ? counter.value + amount : Math.max(counter.value, amount);
  }

  private live(key: string, now: number): Counter | undefined {
    const counter = this.counters.get(key);
    if (counter && counter.expiresAt <= now) {
      this.counters.delete(key);
      return undefined;
    }
    return counter;
  }

  private sweep(now: number): void {
    if (now < this.sweepAt) return;
    this.sweepAt = now + 10_000;
    for (const [key, counter] of this.counters) if (counter.expiresAt <= now) this.counters.delete(key);
    this.leases.sweep(now);
  }
}
