/**
 * The in-memory twin of the Redis rate-limit scripts: the same validate-then-increment admission,
 * windows, slots and settlement, on process memory (embedded default and fail_open degradation).
 */
import type { Clock } from '../../lib/clock.ts';
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
import { OutputCountersUnsupportedError } from './shared-store.ts';

interface Counter {
  value: number;
  expiresAt: number;
}

export class MemoryRateLimiter {
  private readonly clock: Clock;
  private readonly counters = new Map<string, Counter>();
  private readonly slots = new Map<string, Map<string, number>>();
  private sweepAt = 0;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  admit(request: AdmissionRequest): AdmissionResponse {
    // Output policies need the shared Redis store (spec output rule 10): no per-process twin.
    if (request.outputs?.length) throw new OutputCountersUnsupportedError();
    const now = this.clock.now();
    this.sweep(now);
    const reads = (request.reads ?? []).map((key) => this.live(key, now)?.value ?? 0);
    const budgets = request.budgets ?? [];
    const spent: number[] = [];
    for (let index = 0; index < budgets.length; index++) {
      const budget = budgets[index]!;
      const { key, end } = budgetKey(budget, now);
      const value = this.live(key, now)?.value ?? 0;
      if (budget.limit !== null && value >= budget.limit) {
        const failed = request.checks.length + 1 + index;
        return { admitted: false, now, failed, count: value, reset: end ?? 0, reads };
      }
      spent.push(value);
    }
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
      const leases = this.leases(slot.key, now);
      if (leases.size >= slot.limit) {
        return {
          admitted: false,
          now,
          failed: request.checks.length,
          count: leases.size,
          reset: Math.min(...leases.values()),
          reads,
        };
      }
    }
    const counts = planned.map((plan, index) => {
      const counter = this.live(plan.key, now) ?? { value: 0, expiresAt: now + plan.ttl };
      counter.value += request.checks[index]!.amount;
      this.counters.set(plan.key, counter);
      return counter.value;
    });
    if (slot) this.leases(slot.key, now).set(slot.member, now + slot.leaseMs);
    const resets = planned.map((plan) => plan.reset);
    return { admitted: true, now, counts, resets, reads, spent, outputs: [] };
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
    if (request.release) this.slots.get(request.release.key)?.delete(request.release.member);
    for (const charge of request.budgets ?? []) this.charge(charge, now);
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

  /** A minute counter's value (for tests and diagnostics). */
  read(key: string): number {
    return this.live(key, this.clock.now())?.value ?? 0;
  }

  private live(key: string, now: number): Counter | undefined {
    const counter = this.counters.get(key);
    if (counter && counter.expiresAt <= now) {
      this.counters.delete(key);
      return undefined;
    }
    return counter;
  }

  private leases(key: string, now: number): Map<string, number> {
    let leases = this.slots.get(key);
    if (!leases) {
      leases = new Map();
      this.slots.set(key, leases);
    }
    for (const [member, expiresAt] of leases) if (expiresAt <= now) leases.delete(member);
    return leases;
  }

  private sweep(now: number): void {
    if (now < this.sweepAt) return;
    this.sweepAt = now + 10_000;
    for (const [key, counter] of this.counters) if (counter.expiresAt <= now) this.counters.delete(key);
    for (const [key, leases] of this.slots) {
      for (const [member, expiresAt] of leases) if (expiresAt <= now) leases.delete(member);
      if (leases.size === 0) this.slots.delete(key);
    }
  }
}
