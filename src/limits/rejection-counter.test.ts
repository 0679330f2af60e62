import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../observability/logger.ts';
import { MemorySharedStore } from '../store/shared/memory-shared-store.ts';
import { RejectionCounter } from './rejection-counter.ts';

const MINUTE = 60_000;

function setUp() {
  let now = Date.parse('2026-11-24T12:00:30Z');
  const clock: Clock = { now: () => now };
  const store = new MemorySharedStore(clock);
  let available = true;
  vi.spyOn(store, 'isAvailable').mockImplementation(() => available);
  const writes = vi.spyOn(store, 'incrementMany');
  const logger = { debug: vi.fn() } as unknown as Logger;
  return {
    store,
    writes,
    logger,
    counter: new RejectionCounter({ store, clock, logger }),
    advance: (ms: number) => (now += ms),
    setAvailable: (value: boolean) => (available = value),
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('RejectionCounter', () => {
  it('counts each refusal per minute for the whole gateway and for its organization', async () => {
    const { counter, advance } = setUp();
    counter.record('rate_limit', 'org-a');
    counter.record('budget', null);
    advance(MINUTE);
    counter.record('rate_limit', 'org-b');
    const all = await counter.lastHour();
    expect(all).toMatchObject({ windowSeconds: 3600, rateLimit: 2, budget: 1 });
    expect(all.series).toHaveLength(60);
    expect(all.series.at(-1)).toEqual({ start: Date.parse('2026-11-24T12:01:00Z'), rateLimit: 1, budget: 0 });
    expect(all.series.at(-2)).toEqual({ start: Date.parse('2026-11-24T12:00:00Z'), rateLimit: 1, budget: 1 });
    expect(await counter.lastHour('org-a')).toMatchObject({ rateLimit: 1, budget: 0 });
    expect(await counter.lastHour('org-c')).toMatchObject({ rateLimit: 0, budget: 0 });
  });

  it('keeps the refusal path off the store: N refusals within a second make one store write', async () => {
    vi.useFakeTimers();
    const { counter, writes, store } = setUp();
    counter.start();
    for (let index = 0; index < 100; index++) counter.record('rate_limit', index < 60 ? 'org-a' : null);
    await vi.advanceTimersByTimeAsync(999);
    expect(writes).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(writes).toHaveBeenCalledTimes(1);
    expect(writes.mock.calls[0]![0]).toEqual([
      { key: expect.stringMatching(/:all$/), amount: 100 },
      { key: expect.stringMatching(/:org:org-a$/), amount: 60 },
    ]);
    // Nothing new: the next second writes nothing.
    await vi.advanceTimersByTimeAsync(1000);
    expect(writes).toHaveBeenCalledTimes(1);
    await counter.close();
    expect(await store.getMany(writes.mock.calls[0]![0].map((counter) => counter.key))).toEqual([
      '100',
      '60',
    ]);
  });

  it('writes what is left on close, and stops writing after it', async () => {
    vi.useFakeTimers();
    const { counter, writes } = setUp();
    counter.start();
    counter.record('budget', null);
    await counter.close();
    expect(writes).toHaveBeenCalledTimes(1);
    counter.record('budget', null);
    await vi.advanceTimersByTimeAsync(5000);
    expect(writes).toHaveBeenCalledTimes(1);
  });

  it('forgets minutes older than the hour it reads', async () => {
    const { counter, advance } = setUp();
    counter.record('budget', null);
    await counter.flush();
    advance(60 * MINUTE);
    expect(await counter.lastHour()).toMatchObject({ rateLimit: 0, budget: 0 });
  });

  it('while the store is down (fail_open) keeps the counts and writes them when it answers, minutes past the hour dropped', async () => {
    const { counter, writes, advance, setAvailable } = setUp();
    setAvailable(false);
    counter.record('rate_limit', null); // 12:00, out of the hour by the time the store is back
    advance(30 * MINUTE);
    counter.record('budget', null);
    await counter.flush();
    expect(writes).not.toHaveBeenCalled();
    advance(30 * MINUTE);
    setAvailable(true);
    expect(await counter.lastHour()).toMatchObject({ rateLimit: 0, budget: 1 });
    expect(writes).toHaveBeenCalledTimes(1);
    expect(writes.mock.calls[0]![0]).toHaveLength(1);
  });

  it('never throws to the refused request: a failed write is logged at debug and dropped', async () => {
    const { logger } = setUp();
    const failing = {
      incrementMany: vi.fn(() => Promise.reject(new Error('redis down'))),
      getMany: () => Promise.resolve([]),
      isAvailable: () => true,
    };
    const counter = new RejectionCounter({ store: failing, clock: { now: () => 0 }, logger });
    expect(() => counter.record('rate_limit', 'org-a')).not.toThrow();
    await expect(counter.flush()).resolves.toBeUndefined();
    expect(logger.debug).toHaveBeenCalledTimes(1);
    await counter.flush();
    expect(failing.incrementMany).toHaveBeenCalledTimes(1);
  });
});
