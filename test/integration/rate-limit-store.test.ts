/**
 * Atomic rate limiting, leases and budget reservations on the in-memory store and on Redis (private
 * key prefix, injected clock).
 */
import { MemorySharedStore } from '../../src/store/shared/memory-shared-store.ts';
import { RedisSharedStore } from '../../src/store/shared/redis-shared-store.ts';
import { runLeaseStoreSuite } from '../support/lease-store-suite.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { type RateLimitHarness, runRateLimitStoreSuite } from '../support/rate-limit-store-suite.ts';
import { realBackendsAvailable, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

async function memoryHarness(): Promise<RateLimitHarness> {
  const clock = new ManualClock();
  const store = new MemorySharedStore(clock);
  return { store, clock, close: () => store.close() };
}

async function redisHarness(): Promise<RateLimitHarness> {
  const clock = new ManualClock();
  const store = new RedisSharedStore({
    url: TEST_REDIS_URL,
    prefix: `${uniqueName('sbrl')}:`,
    commandTimeoutMs: 1_000,
    clock,
  });
  await store.waitUntilReady(2_000);
  return { store, clock, close: () => store.close() };
}

runRateLimitStoreSuite('memory', memoryHarness);
runLeaseStoreSuite('memory', memoryHarness);
if (await realBackendsAvailable()) {
  runRateLimitStoreSuite('redis', redisHarness);
  runLeaseStoreSuite('redis', redisHarness);
}
