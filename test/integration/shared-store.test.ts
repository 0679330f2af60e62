/** The SharedStore conformance suite on the in-memory store and on Redis (under a private prefix). */
import { setTimeout as delay } from 'node:timers/promises';
import { MemorySharedStore } from '../../src/store/shared/memory-shared-store.ts';
import { RedisSharedStore } from '../../src/store/shared/redis-shared-store.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { runSharedStoreSuite } from '../support/shared-store-suite.ts';
import { realBackendsAvailable, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

runSharedStoreSuite('memory', async () => {
  const clock = new ManualClock();
  const store = new MemorySharedStore(clock);
  return { store, advance: async (milliseconds) => clock.advance(milliseconds), close: () => store.close() };
});

if (await realBackendsAvailable()) {
  runSharedStoreSuite('redis', async () => {
    const store = new RedisSharedStore({
      url: TEST_REDIS_URL,
      prefix: `${uniqueName('sbtest')}:`,
      commandTimeoutMs: 500,
    });
    await store.waitUntilReady(2_000);
    return { store, advance: (milliseconds) => delay(milliseconds), close: () => store.close() };
  });
}
