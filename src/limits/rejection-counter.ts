/**
 * Counts requests refused by identity rate limits (429) and budgets, per minute, in the shared store,
 * so the console's overview shows every replica's refusals. A refusal only adds to an in-process
 * count (a client flooding past its rpm makes the refusal path the hot path, so it must not wait on
 * Redis); once a second the counts go to the store in one round trip, and on close. Each refusal is
 * counted for the whole gateway and for the caller's organization, whose administrator sees only
 * that count.
 *
 * While the store is known to be down (fail_open degraded mode) the counts stay in process and are
 * written when it answers again, minutes older than the hour the overview reads dropped. A write that
 * fails is logged at debug and dropped, not retried (it may have landed: a retry could count twice);
 * counts of a replica that stops while the store is down are lost.
 */
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../observability/logger.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';

export type RejectionKind = 'rate_limit' | 'budget';

const MINUTE_MS = 60_000;
/** Counters outlive the hour the overview reads by another hour, then expire. */
const COUNTER_TTL_MS = 2 * 3_600_000;
const MINUTES = 60;
const KINDS: readonly RejectionKind[] = ['rate_limit', 'budget'];
const FLUSH_INTERVAL_MS = 1_000;

export interface RejectionSeries {
  windowSeconds: number;
  rateLimit: number;
  budget: number;
  series: Array<{ start: number; rateLimit: number; budget: number }>;
}

type CounterStore = Pick<SharedStore, 'incrementMany' | 'getMany' | 'isAvailable'>;

export class RejectionCounter {
  private readonly store: CounterStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  /** Counts not yet written, by counter key (its minute kept to drop it once out of the hour). */
  private pending = new Map<string, { minute: number; amount: number }>();
  /** The writes started so far, in order; a read waits for them. */
  private written: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(options: { store: CounterStore; clock: Clock; logger: Logger }) {
    this.store = options.store;
    this.clock = options.clock;
    this.logger = options.logger;
  }

  /** Writes the counts once a second until `close`. */
  start(): void {
    this.timer ??= setInterval(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Called on the refused request's path: counts in process, never touches the store, never throws. */
  record(kind: RejectionKind, organizationId: string | null): void {
    const minute = Math.floor(this.clock.now() / MINUTE_MS);
    const scopes = organizationId === null ? ['all'] : ['all', `org:${organizationId}`];
    for (const scope of scopes) {
      const key = counterKey(kind, minute, scope);
      const entry = this.pending.get(key);
      if (entry) entry.amount++;
      else this.pending.set(key, { minute, amount: 1 });
    }
  }

  /** Writes the pending counts in one round trip (kept while the store is down); never throws. */
  flush(): Promise<void> {
    const oldest = Math.floor(this.clock.now() / MINUTE_MS) - MINUTES + 1;
    for (const [key, entry] of this.pending) if (entry.minute < oldest) this.pending.delete(key);
    if (this.pending.size > 0 && this.store.isAvailable()) {
      const counters = [...this.pending].map(([key, entry]) => ({ key, amount: entry.amount }));
      this.pending = new Map();
      this.written = this.written.then(() =>
        this.store.incrementMany(counters, COUNTER_TTL_MS).catch((error: unknown) => {
          this.logger.debug({ err: error, counters: counters.length }, 'rejection counters not written');
        }),
      );
    }
    return this.written;
  }

  /** The last 60 minutes (the current one last), for the whole gateway or one organization. */
  async lastHour(organizationId?: string): Promise<RejectionSeries> {
    await this.flush(); // this replica's own refusals of the last second count too
    const current = Math.floor(this.clock.now() / MINUTE_MS);
    const minutes = Array.from({ length: MINUTES }, (_, index) => current - MINUTES + 1 + index);
    const scope = organizationId === undefined ? 'all' : `org:${organizationId}`;
    const keys = KINDS.flatMap((kind) => minutes.map((minute) => counterKey(kind, minute, scope)));
    const values = (await this.store.getMany(keys)).map((value) => Number(value ?? 0));
    const series = minutes.map((minute, index) => ({
      start: minute * MINUTE_MS,
      rateLimit: values[index]!,
      budget: values[MINUTES + index]!,
    }));
    return {
      windowSeconds: MINUTES * 60,
      rateLimit: series.reduce((sum, entry) => sum + entry.rateLimit, 0),
      budget: series.reduce((sum, entry) => sum + entry.budget, 0),
      series,
    };
  }
}

function counterKey(kind: RejectionKind, minute: number, scope: string): string {
  return `console:rejections:${kind}:${minute}:${scope}`;
}
