/** The SharedStore conformance suite on the in-memory store and on Redis (under a private prefix). */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { MemorySharedStore } from '../../src/store/shared/memory-shared-store.ts';
import { RedisSharedStore } from '../../src/store/shared/redis-shared-store.ts';
import { responseCacheKey } from '../../src/store/shared/response-cache-keys.ts';
import { SharedStoreUnavailableError } from '../../src/store/shared/shared-store.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { runSharedStoreSuite } from '../support/shared-store-suite.ts';
import { realBackendsAvailable, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

runSharedStoreSuite('memory', async () => {
  const clock = new ManualClock();
  const store = new MemorySharedStore(clock);
  return {
    store,
    advance: async (milliseconds) => clock.advance(milliseconds),
    close: () => store.close(),
    createSibling: async () => new MemorySharedStore(clock),
  };
});

async function redisStore(url = TEST_REDIS_URL, commandTimeoutMs = 500): Promise<RedisSharedStore> {
  const store = new RedisSharedStore({ url, prefix: `${uniqueName('sbtest')}:`, commandTimeoutMs });
  await store.waitUntilReady(2_000);
  return store;
}

if (await realBackendsAvailable()) {
  runSharedStoreSuite('redis', async () => {
    const store = await redisStore();
    return {
      store,
      advance: (milliseconds) => delay(milliseconds),
      close: () => store.close(),
      createSibling: () => redisStore(),
      remainingTtlMs: (key) => store.client.pttl(store.prefix + key),
    };
  });
}

describe('the in-process response cache of the memory store', () => {
  it('evicts the least recently used answers to stay within its byte budget', async () => {
    const store = new MemorySharedStore(new ManualClock(), { responseCacheBytes: 1_000 });
    const key = (index: number) =>
      responseCacheKey({ team: 't', scopeTag: 'team', model: 'm', hash: `${index}` });
    const answer = 'x'.repeat(300 - key(0).length); // 300 bytes per entry: three fit
    for (const index of [1, 2, 3]) await store.cacheSet(key(index), answer, 60_000);
    expect(await store.cacheGet(key(1))).toBe(answer); // 2 is now the least recently used
    await store.cacheSet(key(4), answer, 60_000);
    expect(await store.cacheGet(key(2))).toBeUndefined();
    for (const index of [1, 3, 4]) expect(await store.cacheGet(key(index))).toBe(answer);
  });
});

describe.runIf(await realBackendsAvailable())('the response cache when Redis is down', () => {
  let redis: PrivateRedis | undefined;
  let store: RedisSharedStore | undefined;
  afterAll(async () => {
    await store?.close();
    await redis?.kill();
  });

  it('rejects cacheGet, cacheSet and cacheDelete with SharedStoreUnavailableError, without waiting for a timeout', async () => {
    redis = await PrivateRedis.start();
    // "Quickly" as event order, not a wall-clock bound: the command timeout is longer than the test may
    // run, so a rejection can only come from the lost connection, never from waiting the timeout out.
    store = await redisStore(redis.url, 60_000);
    const key = responseCacheKey({ team: null, scopeTag: 'global', model: 'm', hash: '00' });
    await store.cacheSet(key, 'v', 60_000);
    expect(await store.cacheGet(key)).toBe('v');
    await redis.kill();
    await expect(store.cacheGet(key)).rejects.toBeInstanceOf(SharedStoreUnavailableError);
    await expect(store.cacheSet(key, 'v', 1_000)).rejects.toBeInstanceOf(SharedStoreUnavailableError);
    await expect(store.cacheDelete('rc:6:*')).rejects.toBeInstanceOf(SharedStoreUnavailableError);
  });
});
