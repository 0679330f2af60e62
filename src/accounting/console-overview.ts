/**
 * The console overview from the spend records: per time bucket (every bucket present, zero-filled)
 * requests, errors, tokens, spend and approximate latency percentiles, the window's totals, and the
 * top models, keys and teams. Percentiles are interpolated inside log-spaced latency bins (about 10 %
 * wide), so they are approximate by up to a bin's width.
 *
 * Each answer is cached per window and organization (30 s for 1h and 24h, 5 min for 7d and 30d) and
 * computed once for concurrent callers: on SQLite the queries run synchronously on the event loop and
 * scan the whole window, so every open console tab polling them would stall proxied traffic.
 */
import type { Clock } from '../lib/clock.ts';
import { errors } from '../lib/error-catalogue.ts';
import {
  type BucketTotals,
  type ConsoleOverviewRepository,
  LATENCY_BIN_BOUNDS,
  type LatencyBinCount,
  type OverviewRange,
  type TopRow,
} from '../store/db/repositories/console-overview-repository.ts';
import { AnswerCache } from './answer-cache.ts';

/** `cacheMs`: how long an answer is reused: one console poll (30 s) for the short windows, 5 min for the long. */
export const OVERVIEW_WINDOWS = {
  '1h': { windowMs: 3_600_000, bucketMs: 60_000, cacheMs: 30_000 },
  '24h': { windowMs: 86_400_000, bucketMs: 3_600_000, cacheMs: 30_000 },
  '7d': { windowMs: 7 * 86_400_000, bucketMs: 6 * 3_600_000, cacheMs: 300_000 },
  '30d': { windowMs: 30 * 86_400_000, bucketMs: 86_400_000, cacheMs: 300_000 },
} as const;
/** Windows × organizations kept at once; beyond it the oldest answer is dropped. */
const CACHED_ANSWERS = 1_000;
export type OverviewWindow = keyof typeof OVERVIEW_WINDOWS;

export interface OverviewBucket {
  start: number;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  spend: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
}

export interface Overview {
  window: OverviewWindow;
  /** Start of the first bucket (epoch ms). */
  from: number;
  /** Now (epoch ms). */
  to: number;
  bucketMs: number;
  series: OverviewBucket[];
  totals: Omit<OverviewBucket, 'start'> & { fallbacks: number };
  topModels: TopRow[];
  topKeys: TopRow[];
  topTeams: TopRow[];
}

export class ConsoleOverview {
  private readonly repository: Pick<ConsoleOverviewRepository, 'buckets' | 'top'>;
  private readonly clock: Clock;
  private readonly answers: AnswerCache<Overview>;
  private readonly oneAtATime: boolean;
  /** The passes queued so far (oneAtATime), so the next waits for them. */
  private passes: Promise<unknown> = Promise.resolve();

  /**
   * `oneAtATime` (SQLite, whose queries block the event loop): the passes run one by one with a turn
   * of the event loop between them, so proxied requests are served between passes instead of after
   * all of them. On PostgreSQL they run at once, on the database server.
   */
  constructor(options: {
    repository: Pick<ConsoleOverviewRepository, 'buckets' | 'top'>;
    clock: Clock;
    oneAtATime?: boolean;
  }) {
    this.repository = options.repository;
    this.clock = options.clock;
    this.oneAtATime = options.oneAtATime ?? false;
    this.answers = new AnswerCache({ clock: options.clock, maxEntries: CACHED_ANSWERS });
  }

  /**
   * `organizationId` narrows every figure to one organization's spend records. The answer may be up
   * to the window's `cacheMs` old (its `to` says when it was computed).
   */
  async read(input: { window?: string | undefined; organizationId?: string | undefined }): Promise<Overview> {
    const window = overviewWindow(input.window);
    const key = JSON.stringify([window, input.organizationId ?? null]);
    return this.answers.get(key, OVERVIEW_WINDOWS[window].cacheMs, () =>
      this.compute(window, input.organizationId),
    );
  }

  private async compute(window: OverviewWindow, organizationId: string | undefined): Promise<Overview> {
    const { windowMs, bucketMs } = OVERVIEW_WINDOWS[window];
    const count = windowMs / bucketMs;
    const to = this.clock.now();
    // Buckets are aligned to their size; the last one holds now.
    const from = Math.floor(to / bucketMs) * bucketMs - (count - 1) * bucketMs;
    const range: OverviewRange = { from, to: to + 1, bucketMs, organizationId };
    const [{ totals: buckets, histogram }, topModels, topKeys, topTeams] = await Promise.all([
      this.pass(() => this.repository.buckets(range)),
      this.pass(() => this.repository.top(range, 'model')),
      this.pass(() => this.repository.top(range, 'key_id')),
      this.pass(() => this.repository.top(range, 'team_id')),
    ]);
    const series = zeroFilled(buckets, histogram, from, bucketMs, count);
    const sum = (pick: (bucket: BucketTotals) => number) =>
      buckets.reduce((total, bucket) => total + pick(bucket), 0);
    const overall = binCounts(histogram);
    return {
      window,
      from,
      to,
      bucketMs,
      series,
      totals: {
        requests: sum((bucket) => bucket.requests),
        errors: sum((bucket) => bucket.errors),
        promptTokens: sum((bucket) => bucket.promptTokens),
        completionTokens: sum((bucket) => bucket.completionTokens),
        spend: sum((bucket) => bucket.spend),
        latencyP50Ms: percentile(overall, 0.5),
        latencyP99Ms: percentile(overall, 0.99),
        fallbacks: sum((bucket) => bucket.fallbacks),
      },
      topModels,
      topKeys,
      topTeams,
    };
  }

  /** Runs one pass over the spend records: at once, or (oneAtATime) after the ones queued and a turn of the loop. */
  private pass<T>(run: () => Promise<T>): Promise<T> {
    if (!this.oneAtATime) return run();
    const next = this.passes.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(run);
    this.passes = next.catch(() => undefined);
    return next;
  }
}

export function overviewWindow(value: string | undefined): OverviewWindow {
  if (value === undefined) return '24h';
  if (Object.hasOwn(OVERVIEW_WINDOWS, value)) return value as OverviewWindow;
  throw errors.invalidRequest(
    `Invalid query field window: must be one of ${Object.keys(OVERVIEW_WINDOWS).join(', ')}.`,
    'window',
  );
}

function zeroFilled(
  buckets: readonly BucketTotals[],
  histogram: readonly LatencyBinCount[],
  from: number,
  bucketMs: number,
  count: number,
): OverviewBucket[] {
  const byIndex = new Map(buckets.map((bucket) => [bucket.bucket, bucket]));
  return Array.from({ length: count }, (_, index) => {
    const found = byIndex.get(index);
    const bins = binCounts(histogram.filter((entry) => entry.bucket === index));
    return {
      start: from + index * bucketMs,
      requests: found?.requests ?? 0,
      errors: found?.errors ?? 0,
      promptTokens: found?.promptTokens ?? 0,
      completionTokens: found?.completionTokens ?? 0,
      spend: found?.spend ?? 0,
      latencyP50Ms: percentile(bins, 0.5),
      latencyP99Ms: percentile(bins, 0.99),
    };
  });
}

/** Requests per latency bin (index = bin). */
function binCounts(entries: readonly LatencyBinCount[]): number[] {
  const counts = new Array<number>(LATENCY_BIN_BOUNDS.length).fill(0);
  for (const entry of entries) counts[entry.bin] = (counts[entry.bin] ?? 0) + entry.count;
  return counts;
}

/**
 * The latency below which a fraction `p` of requests fell, interpolated linearly inside its bin;
 * null without requests. The open last bin reports its lower bound.
 */
export function percentile(counts: readonly number[], p: number): number | null {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = p * total;
  let below = 0;
  for (let bin = 0; bin < counts.length; bin++) {
    const count = counts[bin]!;
    if (count > 0 && below + count >= rank) {
      const lower = LATENCY_BIN_BOUNDS[bin]!;
      const upper = LATENCY_BIN_BOUNDS[bin + 1] ?? lower;
      return Math.round((lower + ((upper - lower) * (rank - below)) / count) * 10) / 10;
    }
    below += count;
  }
  return LATENCY_BIN_BOUNDS.at(-1)!;
}
