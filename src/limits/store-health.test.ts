import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../observability/logger.ts';
import { createMetrics } from '../observability/metrics.ts';
import { MemorySharedStore } from '../store/shared/memory-shared-store.ts';
import { SharedStoreUnavailableError, type StoreFailure } from '../store/shared/shared-store.ts';
import { StoreHealth } from './store-health.ts';

function setUp(degradedMode: 'fail_open' | 'fail_closed' = 'fail_open') {
  const store = new MemorySharedStore({ now: () => 0 });
  let available = true;
  vi.spyOn(store, 'isAvailable').mockImplementation(() => available);
  const warnings: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const logger = {
    warn: (fields: Record<string, unknown>, message: string) => warnings.push({ fields, message }),
  } as unknown as Logger;
  const metrics = createMetrics({ collectProcessMetrics: false });
  const health = new StoreHealth({ store, degradedMode, logger, metrics, probeEveryMs: 10 });
  const fail = (failure: StoreFailure) => health.failed(new SharedStoreUnavailableError('test', failure));
  return { store, health, warnings, metrics, fail, setAvailable: (value: boolean) => (available = value) };
}

async function gauge(metrics: ReturnType<typeof createMetrics>): Promise<number> {
  return (await metrics.rateLimitDegraded.get()).values[0]?.value ?? 0;
}

describe('StoreHealth: slow is not down', () => {
  it('degrades on no number of slow answers (other replies kept arriving) or late ones', () => {
    const { health, warnings, fail } = setUp();
    for (let index = 0; index < 20; index++) fail(index % 2 ? 'slow' : 'late');
    expect(health.isDown()).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('declares the store down after three silent timeouts in a row, and warns once with the reason', async () => {
    const { health, warnings, fail, metrics } = setUp();
    fail('silent');
    fail('silent');
    health.answered(); // an answer in between: the silence was not an outage
    fail('silent');
    fail('silent');
    expect(health.isDown()).toBe(false);
    fail('silent');
    expect(health.isDown()).toBe(true);
    fail('silent');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('per-process counters');
    expect(String(warnings[0]!.fields.reason)).toContain('3 commands in a row got no answer at all');
    expect(await gauge(metrics)).toBe(1);
    health.stop();
  });

  it('is down at once when the connection is lost, and says fail_closed refuses', () => {
    const { health, warnings, setAvailable } = setUp('fail_closed');
    setAvailable(false);
    expect(health.isDown()).toBe(true);
    expect(warnings[0]!.message).toContain('refused (fail_closed)');
    health.stop();
  });

  it('aborts its down signal when declared down, and hands out a fresh one after the recovery', () => {
    const { health, fail } = setUp();
    const before = health.downSignal;
    fail('disconnected');
    expect(before.aborted).toBe(true);
    health.answered();
    expect(health.isDown()).toBe(false);
    expect(health.downSignal.aborted).toBe(false);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('pings a down store until it answers, then warns that it recovered with the admissions decided locally', async () => {
    // The probe is an interval timer (every 10 ms here): fake timers move it by hand, not by sleeping.
    vi.useFakeTimers();
    const { health, warnings, fail, setAvailable, store, metrics } = setUp();
    setAvailable(false);
    fail('disconnected');
    health.decidedLocally();
    health.decidedLocally();
    const ping = vi.spyOn(store, 'ping');
    await vi.advanceTimersByTimeAsync(50); // five probe periods
    expect(ping).not.toHaveBeenCalled(); // no connection: nothing to ping
    expect(health.isDown()).toBe(true);
    setAvailable(true);
    await vi.advanceTimersByTimeAsync(10); // the next probe pings, and the store answers
    expect(ping).toHaveBeenCalledTimes(1);
    expect(health.isDown()).toBe(false);
    expect(warnings.map((warning) => warning.message)).toEqual([
      expect.stringContaining('shared store down'),
      expect.stringContaining('shared store answers again'),
    ]);
    expect(warnings[1]!.fields).toMatchObject({ decidedLocally: 2 });
    expect(await gauge(metrics)).toBe(0);
    expect((await metrics.rateLimitLocalDecisions.get()).values[0]?.value).toBe(2);
  });
});
