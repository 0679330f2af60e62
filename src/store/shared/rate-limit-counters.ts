/**
 * The shapes of atomic rate-limit admission and settlement, shared by the Redis (Lua) and in-memory
 * implementations. Windows: a minute counter lives 60 seconds from its first increment (it carries its
 * own expiry, judged by the store's clock); hour and day counters end at the top of the clock hour and
 * at midnight UTC (their keys carry the window start). In-flight leases (parallel slots and budget
 * reservations) expire by themselves unless settlement renews them, so a dead process holds nothing
 * for longer than one lease.
 */
import type { OutputCheck, OutputEpochMark, OutputRefusal } from './output-counters.ts';

export type CounterWindow = 'minute' | 'hour' | 'day';

export interface CounterCheck {
  /** Counter key without its window suffix. */
  key: string;
  window: CounterWindow;
  limit: number;
  /** How much this request adds (1 for request counts, the token estimate for token counts). */
  amount: number;
}

/** A bounded set of in-flight leases (max_parallel_requests); expired leases free themselves. */
export interface SlotCheck {
  key: string;
  limit: number;
  member: string;
  leaseMs: number;
}

/**
 * A spend counter (integer micro-USD) of one budget. Its window is aligned to the epoch and chosen by the
 * store's clock: the stored key is `<key>:<durationMs>:<floor(now / durationMs)>`, or `<key>:life` for a
 * lifetime budget (durationMs 0), and a window's key expires at the window's end.
 */
export interface BudgetCounter {
  key: string;
  durationMs: number;
}

/** Refuses admission when the counter is at or above `limit` (null: read only, for a soft budget). */
export interface BudgetCheck extends BudgetCounter {
  limit: number | null;
}

/**
 * Adds `amount` to a budget counter of the store's current window. With `raiseInWindow`, raises the
 * counter to at least `amount` instead, only while that window index is still current (reconciliation).
 */
export interface BudgetCharge extends BudgetCounter {
  amount: number;
  raiseInWindow?: number;
}

/**
 * An estimate of the request's cost (integer micro-USD) held on every budget with a limit from admission
 * until settlement releases it or its lease ends. A budget refuses when spend + reservations in flight +
 * `amount` would pass it.
 */
export interface BudgetReservation {
  /** Unique per admission. */
  member: string;
  amount: number;
  leaseMs: number;
}

export interface AdmissionRequest {
  checks: readonly CounterCheck[];
  slot?: SlotCheck;
  /**
   * The store-clock time (epoch ms) after which this admission must change nothing: a script that
   * reaches the store later (the caller gave up on it) is a no-op and the call fails
   * (SharedStoreUnavailableError of kind `late`). The Redis store also sets its own, from its timeout.
   */
  deadline?: number;
  /**
   * Aborted when the caller stops waiting: the call fails at once (kind `silent`), and an admission the
   * store still makes is undone when its answer arrives.
   */
  signal?: AbortSignal;
  reservation?: BudgetReservation;
  /** Minute counters to read in the same round trip (deployment usage for routing). */
  reads?: readonly string[];
  /** Budgets, checked before every other check (read only: admission adds no spend). */
  budgets?: readonly BudgetCheck[];
  /**
   * Output-token counters, read after every other check (read only: output is recorded per attempt).
   * With any, the store epoch marker is checked too; `epochId` re-creates it after a pause, and
   * `epochSeen` (the highest write sequence this process had acknowledged in that epoch) detects a
   * restore or failover that kept the marker but lost writes.
   */
  outputs?: readonly OutputCheck[];
  epochId?: string;
  epochSeen?: OutputEpochMark;
}

export type AdmissionResponse =
  | {
      admitted: true;
      /** The store's clock, epoch ms. */
      now: number;
      /** Each check's counter after this request. */
      counts: number[];
      /** Each check's window reset, epoch ms. */
      resets: number[];
      reads: number[];
      /** Each budget's spend (micro-USD) in its current window. */
      spent: number[];
      /** Each output counter's recorded usage in the store's current minute. */
      outputs: number[];
    }
  | {
      admitted: false;
      now: number;
      /**
       * Index of the check that failed; `checks.length` means the slot check and `checks.length + 1 + i`
       * budget `i` (then `count` is its spend and `reset` its window end, 0 for a lifetime budget).
       */
      failed: number;
      count: number;
      reset: number;
      reads: number[];
      /** A budget refusal: the reservations in flight on that budget (micro-USD; `count` is its spend). */
      reserved?: number;
      /** Set when an output counter refused (then `failed` is -1). */
      output?: OutputRefusal;
    };

export interface CounterAdjustment {
  /** Full counter key (window suffix included: see `windowKey`). */
  key: string;
  window: CounterWindow;
  delta: number;
  /** Create a minute counter when it does not exist (otherwise only live counters change). */
  createMinute?: boolean;
}

/** A parallel slot's lease: the slot set's key and the admission's member. */
export interface SlotLease {
  key: string;
  member: string;
}

/** A budget reservation's lease on one budget (`key`: the budget counter's key, without its window). */
export interface ReservationLease {
  key: string;
  member: string;
  amount: number;
}

export interface LeaseSet {
  slots?: readonly SlotLease[];
  reservations?: readonly ReservationLease[];
}

export interface SettlementRequest {
  adjustments: readonly CounterAdjustment[];
  budgets?: readonly BudgetCharge[];
  /** Leases this settlement ends; ending an ended or expired lease changes nothing (retries are safe). */
  release?: LeaseSet;
  /** Leases extended to the store's now + `leaseMs`; an ended or expired lease stays ended. */
  renew?: LeaseSet & { leaseMs: number };
}

export const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Start of the fixed window (hour, day) containing `now`; minute windows have no fixed start. */
export function windowStart(window: CounterWindow, now: number): number {
  if (window === 'hour') return now - (now % HOUR_MS);
  if (window === 'day') return now - (now % DAY_MS);
  return 0;
}

/** The key a check's counter has at time `now`. */
export function windowKey(check: Pick<CounterCheck, 'key' | 'window'>, now: number): string {
  return check.window === 'minute' ? check.key : `${check.key}:${windowStart(check.window, now)}`;
}

/** The stored key of a budget counter at `now`, and when its window ends (null: lifetime). */
export function budgetKey(
  counter: BudgetCounter,
  now: number,
): { key: string; index: number; end: number | null } {
  if (counter.durationMs <= 0) return { key: `${counter.key}:life`, index: 0, end: null };
  const index = Math.floor(now / counter.durationMs);
  return {
    key: `${counter.key}:${counter.durationMs}:${index}`,
    index,
    end: (index + 1) * counter.durationMs,
  };
}

/** When a fixed window ends (hour, day). */
export function windowEnd(window: 'hour' | 'day', now: number): number {
  return windowStart(window, now) + (window === 'hour' ? HOUR_MS : DAY_MS);
}
