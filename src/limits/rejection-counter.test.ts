import { describe, expect, it, vi } from 'vitest';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../observability/logger.ts';
import { MemorySharedStore } from '../store/shared/memory-shared-store.ts';
import { RejectionCounter } from './rejection-counter.ts';

const MINUTE = 60_000;

function setUp() {
  let now = Date.parse('2026-11-24T12:00:30Z');
  const clock: Clock = { now: () => now };
  const store = new MemorySharedStore(clock);
  const logger = { debug: vi.fn() } as unknown as Logger;
  return {
    store,
    logger,
    counter: new RejectionCounter({ store, clock, logger }),
    advance: (ms: number) => (now += ms),
  };
}

describe('RejectionCounter', () => {
  it('counts each refusal per minute for the whole gateway and for its organization', async () => {
    const { counter, advance } = setUp();
    counter.record('rate_limit', 'org-a');
    counter.record('budget', null);
    advance(MINUTE);
    counter.record('rate_limit', 'org-b');
    await Promise.resolve();
    const all = await counter.lastHour();
    expect(all).toMatchObject({ windowSeconds: 3600, rateLimit: 2, budget: 1 });
    expect(all.series).toHaveLength(60);
    expect(all.series.at(-1)).toEqual({ start: Date.parse('2026-11-24T12:01:00Z'), rateLimit: 1, budget: 0 });
    expect(all.series.at(-2)).toEqual({ start: Date.parse('2026-11-24T12:00:00Z'), rateLimit: 1, budget: 1 });
    expect(await counter.lastHour('org-a')).toMatchObject({ rateLimit: 1, budget: 0 });
    expect(await counter.lastHour('org-c')).toMatchObject({ rateLimit: 0, budget: 0 });
  });

  it('forgets minutes older than the hour it reads', async () => {
    const { counter, advance } = setUp();
    counter.record('budget', null);
    advance(60 * MINUTE);
    expect(await counter.lastHour()).toMatchObject({ rateLimit: 0, budget: 0 });
  });

  it('never throws to the refused request: a store failure is logged at debug and dropped', async () => {
    const { logger } = setUp();
    const failing = {
      increment: () => Promise.reject(new Error('redis down')),
      getMany: () => Promise.resolve([]),
    };
    const counter = new RejectionCounter({ store: failing, clock: { now: () => 0 }, logger });
    expect(() => counter.record('rate_limit', 'org-a')).not.toThrow();
    await vi.waitFor(() => expect(logger.debug).toHaveBeenCalledTimes(2));
  });
});
