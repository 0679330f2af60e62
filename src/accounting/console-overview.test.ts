import { describe, expect, it } from 'vitest';
import {
  type BucketTotals,
  LATENCY_BIN_BOUNDS,
  type LatencyBinCount,
} from '../store/db/repositories/console-overview-repository.ts';
import { ConsoleOverview, overviewWindow, percentile } from './console-overview.ts';

const binOf = (latency: number) => {
  let bin = 0;
  while (bin + 1 < LATENCY_BIN_BOUNDS.length && LATENCY_BIN_BOUNDS[bin + 1]! <= latency) bin++;
  return bin;
};

describe('overview latency percentiles', () => {
  it('uses bins at most ~10 % wide above 10 ms, reaching ten minutes, with a bounded count', () => {
    for (let bin = 11; bin + 1 < LATENCY_BIN_BOUNDS.length; bin++) {
      const lower = LATENCY_BIN_BOUNDS[bin]!;
      expect(LATENCY_BIN_BOUNDS[bin + 1]! / lower, `bin ${bin}`).toBeLessThanOrEqual(1.1 + 1e-9);
    }
    expect(LATENCY_BIN_BOUNDS.at(-1)).toBeGreaterThanOrEqual(600_000);
    expect(LATENCY_BIN_BOUNDS.length).toBeLessThan(160);
  });

  it('interpolates within the bin holding the rank, within 10 % of the exact percentile', () => {
    const latencies = Array.from({ length: 1000 }, (_, index) => 20 + index * 3);
    const counts = new Array<number>(LATENCY_BIN_BOUNDS.length).fill(0);
    for (const latency of latencies) counts[binOf(latency)]!++;
    for (const p of [0.5, 0.9, 0.99]) {
      const exact = latencies[Math.ceil(p * latencies.length) - 1]!;
      expect(Math.abs(percentile(counts, p)! - exact) / exact, `p${p * 100}`).toBeLessThanOrEqual(0.1);
    }
  });

  it('is null without requests', () => {
    expect(percentile(new Array(LATENCY_BIN_BOUNDS.length).fill(0), 0.5)).toBeNull();
  });

  it('refuses an unknown window naming the parameter, and defaults to 24h', () => {
    expect(overviewWindow(undefined)).toBe('24h');
    expect(() => overviewWindow('hasOwnProperty')).toThrow(expect.objectContaining({ param: 'window' }));
  });
});

/** A repository that counts its scans; `gate` (when set) holds every query until released. */
function countingRepository() {
  const calls = { buckets: 0, top: 0 };
  let release: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  let failNext = false;
  const wait = async () => {
    await gate;
    if (failNext) {
      failNext = false;
      throw new Error('database gone');
    }
  };
  const repository = {
    async buckets(): Promise<{ totals: BucketTotals[]; histogram: LatencyBinCount[] }> {
      calls.buckets++;
      await wait();
      const totals = [
        { bucket: 0, requests: 2, errors: 0, promptTokens: 0, completionTokens: 0, spend: 0, fallbacks: 0 },
      ];
      return { totals, histogram: [] };
    },
    async top() {
      calls.top++;
      await wait();
      return [];
    },
  };
  return {
    repository,
    calls,
    hold: () => {
      gate = new Promise<void>((resolve) => (release = resolve));
    },
    release: () => release?.(),
    failNext: () => {
      failNext = true;
    },
  };
}

function cachedOverview() {
  let now = Date.parse('2026-11-24T12:00:30Z');
  const fake = countingRepository();
  const overview = new ConsoleOverview({ repository: fake.repository, clock: { now: () => now } });
  return { ...fake, overview, advance: (ms: number) => (now += ms) };
}

describe('overview answer cache (the SQLite queries block the event loop, so they run once per period)', () => {
  it('runs the queries once for two calls within the TTL, and again once the injected clock passes it', async () => {
    const { overview, calls, advance } = cachedOverview();
    const first = await overview.read({ window: '1h' });
    advance(29_999);
    expect(await overview.read({ window: '1h' })).toBe(first);
    expect(calls).toEqual({ buckets: 1, top: 3 });
    advance(1);
    const fresh = await overview.read({ window: '1h' });
    expect(calls).toEqual({ buckets: 2, top: 6 });
    expect(fresh.to).toBe(first.to + 30_000);
  });

  it('keeps the long windows five minutes', async () => {
    const { overview, calls, advance } = cachedOverview();
    await overview.read({ window: '30d' });
    advance(299_999);
    await overview.read({ window: '30d' });
    expect(calls.buckets).toBe(1);
    advance(1);
    await overview.read({ window: '30d' });
    expect(calls.buckets).toBe(2);
  });

  it('caches per window and per organization', async () => {
    const { overview, calls } = cachedOverview();
    await overview.read({ window: '1h' });
    await overview.read({ window: '24h' });
    await overview.read({ window: '1h', organizationId: 'org-a' });
    await overview.read({ window: '1h', organizationId: 'org-b' });
    await overview.read({ window: '1h', organizationId: 'org-a' });
    expect(calls.buckets).toBe(4);
  });

  it('shares one run between concurrent calls (single flight)', async () => {
    const { overview, calls, hold, release } = cachedOverview();
    hold();
    const reads = [overview.read({ window: '7d' }), overview.read({ window: '7d' }), overview.read({})];
    release();
    const [a, b, c] = await Promise.all(reads);
    expect(a).toBe(b);
    expect(c?.window).toBe('24h');
    expect(calls).toEqual({ buckets: 2, top: 6 });
  });

  it('does not keep a failure: the next call runs the queries again', async () => {
    const { overview, calls, failNext } = cachedOverview();
    failNext();
    await expect(overview.read({ window: '1h' })).rejects.toThrow('database gone');
    expect((await overview.read({ window: '1h' })).totals.requests).toBe(2);
    expect(calls.buckets).toBe(2);
  });
});

describe('overview passes on SQLite (each blocks the event loop while it runs)', () => {
  /** Records each pass and each turn of the event loop, in order. */
  async function order(oneAtATime: boolean): Promise<string[]> {
    const events: string[] = [];
    const repository = {
      async buckets() {
        events.push('pass');
        return { totals: [], histogram: [] };
      },
      async top() {
        events.push('pass');
        return [];
      },
    };
    const overview = new ConsoleOverview({ repository, clock: { now: () => 0 }, oneAtATime });
    let ticking = true;
    const tick = () => {
      events.push('turn');
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await overview.read({ window: '1h' });
    ticking = false;
    return events.slice(0, events.lastIndexOf('pass') + 1);
  }

  it('runs one pass per turn of the event loop, so requests are served between passes', async () => {
    const events = await order(true);
    expect(events.filter((event) => event === 'pass')).toHaveLength(4);
    // No two passes without a turn of the loop between them.
    expect(events.join(',')).not.toContain('pass,pass');
  });

  it('runs the passes at once otherwise (PostgreSQL: they run on the server)', async () => {
    expect((await order(false)).join(',')).toBe('pass,pass,pass,pass');
  });
});
