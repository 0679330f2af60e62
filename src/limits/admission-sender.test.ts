import { describe, expect, it, vi } from 'vitest';
import type { Logger } from '../observability/logger.ts';
import { createMetrics } from '../observability/metrics.ts';
import { MemorySharedStore } from '../store/shared/memory-shared-store.ts';
import {
  type SharedStore,
  SharedStoreUnavailableError,
  type StoreFailure,
} from '../store/shared/shared-store.ts';
import { AdmissionSender } from './admission-sender.ts';
import { StoreHealth } from './store-health.ts';

function setUp(degradedMode: 'fail_open' | 'fail_closed', failures: StoreFailure[]) {
  const clock = { now: () => Date.parse('2026-11-23T12:00:00Z') };
  const store = new MemorySharedStore(clock);
  const fallback = new MemorySharedStore(clock);
  const planned = [...failures];
  const tried = vi.spyOn(store, 'admit').mockImplementation(async (request) => {
    const failure = planned.shift();
    if (failure) throw new SharedStoreUnavailableError('test', failure);
    return store.rateLimiter.admit(request);
  });
  const locally = vi.spyOn(fallback, 'admit');
  const logger = { warn: () => {} } as unknown as Logger;
  const metrics = createMetrics({ collectProcessMetrics: false });
  const health = new StoreHealth({ store, degradedMode, logger, metrics });
  const sender = new AdmissionSender({ store, fallback, degradedMode, health, metrics });
  const admit = (target: SharedStore) =>
    target.admit({ checks: [{ key: 'rpm', window: 'minute', limit: 10, amount: 1 }] });
  return { sender, health, tried, locally, admit, store, fallback, metrics };
}

describe('AdmissionSender', () => {
  it('waits out slow answers and tries again instead of deciding on per-process counters', async () => {
    const { sender, tried, locally, admit, store } = setUp('fail_open', ['slow', 'slow']);
    const { response, store: answeredBy } = await sender.send(admit);
    expect(response).toMatchObject({ admitted: true, counts: [1] });
    expect(answeredBy).toBe(store);
    expect(tried).toHaveBeenCalledTimes(3);
    expect(locally).not.toHaveBeenCalled();
  });

  it('decides on per-process counters (fail_open) only once the store is down, and counts it', async () => {
    const { sender, health, locally, admit, fallback, metrics } = setUp('fail_open', [
      'silent',
      'silent',
      'silent',
    ]);
    const { store: answeredBy } = await sender.send(admit);
    expect(health.isDown()).toBe(true);
    expect(answeredBy).toBe(fallback);
    expect(locally).toHaveBeenCalledTimes(1);
    expect((await metrics.rateLimitLocalDecisions.get()).values[0]?.value).toBe(1);
    expect((await metrics.rateLimitStoreErrors.get()).values[0]?.value).toBe(1);
    health.stop();
  });

  it('does not wait for a store known to be down', async () => {
    const { sender, health, tried, admit } = setUp('fail_open', []);
    health.failed(new SharedStoreUnavailableError('gone', 'disconnected'));
    await sender.send(admit);
    expect(tried).not.toHaveBeenCalled();
    health.stop();
  });

  it('answers 503 shared_store_unavailable under fail_closed once the store is down', async () => {
    const { sender, health, locally, admit } = setUp('fail_closed', ['disconnected']);
    await expect(sender.send(admit)).rejects.toMatchObject({ status: 503, code: 'shared_store_unavailable' });
    expect(locally).not.toHaveBeenCalled();
    health.stop();
  });

  it('answers 503 output_tpm_unavailable for a governed admission the store cannot answer, whatever the mode', async () => {
    const { sender, health, locally, admit } = setUp('fail_open', ['disconnected']);
    await expect(sender.sendGoverned(admit)).rejects.toMatchObject({
      status: 503,
      code: 'output_tpm_unavailable',
    });
    expect(locally).not.toHaveBeenCalled();
    health.stop();
  });
});
