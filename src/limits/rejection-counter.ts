/**
 * Counts requests refused by identity rate limits (429) and budgets, per minute, in the shared store,
 * so the console's overview shows every replica's refusals. Written only on the refusal path (an
 * admitted request writes nothing), fire-and-forget; a store failure is logged at debug and dropped.
 * Each refusal is counted for the whole gateway and for the caller's organization, whose
 * administrator sees only that count.
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

export interface RejectionSeries {
  windowSeconds: number;
  rateLimit: number;
  budget: number;
  series: Array<{ start: number; rateLimit: number; budget: number }>;
}

export class RejectionCounter {
  private readonly store: Pick<SharedStore, 'increment' | 'getMany'>;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(options: { store: Pick<SharedStore, 'increment' | 'getMany'>; clock: Clock; logger: Logger }) {
    this.store = options.store;
    this.clock = options.clock;
    this.logger = options.logger;
  }

  /** Never awaited by the refused request, never throws. */
  record(kind: RejectionKind, organizationId: string | null): void {
    const minute = Math.floor(this.clock.now() / MINUTE_MS);
    const scopes = organizationId === null ? ['all'] : ['all', `org:${organizationId}`];
    for (const scope of scopes)
      this.store.increment(counterKey(kind, minute, scope), 1, COUNTER_TTL_MS).catch((error: unknown) => {
        this.logger.debug({ err: error, kind }, 'rejection counter not written');
      });
  }

  /** The last 60 minutes (the current one last), for the whole gateway or one organization. */
  async lastHour(organizationId?: string): Promise<RejectionSeries> {
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
