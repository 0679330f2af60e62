/** One conformance suite for every SharedStore implementation (STYLE convention 13). */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responseCacheKey, responseCachePattern } from '../../src/store/shared/response-cache-keys.ts';
import type { SharedStore } from '../../src/store/shared/shared-store.ts';

export interface StoreHarness {
  store: SharedStore;
  /** Moves time forward by at least `milliseconds` (a manual clock, or real waiting for Redis). */
  advance(milliseconds: number): Promise<void>;
  close(): Promise<void>;
  /** Another store of the same kind that must not see this one's entries (Redis: another key prefix). */
  createSibling(): Promise<SharedStore>;
  /** The expiry the backend itself records for a cache key (Redis PTTL); absent where time is a Clock. */
  remainingTtlMs?(key: string): Promise<number>;
}

export function runSharedStoreSuite(name: string, create: () => Promise<StoreHarness>): void {
  describe(`SharedStore conformance: ${name}`, () => {
    let harness: StoreHarness;
    let store: SharedStore;
    beforeAll(async () => {
      harness = await create();
      store = harness.store;
    });
    afterAll(async () => harness?.close());

    it('stores a value and forgets it after its TTL', async () => {
      await store.set('ttl', 'v', 40);
      expect(await store.get('ttl')).toBe('v');
      await harness.advance(80);
      expect(await store.get('ttl')).toBeNull();
    });

    it('reads several keys in one call, in order, with null for absent or expired ones', async () => {
      expect(await store.getMany([])).toEqual([]);
      await store.set('many-a', 'a', 10_000);
      await store.increment('many-b', 7, 40);
      expect(await store.getMany(['many-a', 'many-missing', 'many-b'])).toEqual(['a', null, '7']);
      await harness.advance(80);
      expect(await store.getMany(['many-b', 'many-a'])).toEqual([null, 'a']);
    });

    it('sets only when absent', async () => {
      expect(await store.setIfAbsent('once', 'a', 10_000)).toBe(true);
      expect(await store.setIfAbsent('once', 'b', 10_000)).toBe(false);
      expect(await store.get('once')).toBe('a');
      await store.delete('once');
      expect(await store.get('once')).toBeNull();
    });

    it('increments a counter whose expiry starts when it is created and is not extended', async () => {
      expect(await store.increment('counter', 2, 60)).toBe(2);
      expect(await store.increment('counter', 3, 10_000)).toBe(5);
      await harness.advance(100);
      expect(await store.increment('counter', 1, 60)).toBe(1);
    });

    it('increments several counters in one call, each with its own amount and the same create-time expiry', async () => {
      await store.incrementMany([], 60);
      await store.increment('many-counter-a', 1, 10_000);
      await store.incrementMany(
        [
          { key: 'many-counter-a', amount: 2 },
          { key: 'many-counter-b', amount: 5 },
        ],
        60,
      );
      expect(await store.getMany(['many-counter-a', 'many-counter-b'])).toEqual(['3', '5']);
      await harness.advance(100);
      expect(await store.getMany(['many-counter-a', 'many-counter-b'])).toEqual(['3', null]);
    });

    it('delivers published messages to subscribers of the channel only', async () => {
      const received: string[] = [];
      const other: string[] = [];
      await store.subscribe(
        'channel-a',
        (message) => received.push(message),
        () => {},
      );
      await store.subscribe(
        'channel-b',
        (message) => other.push(message),
        () => {},
      );
      await waitFor(async () => {
        await store.publish('channel-a', 'ping');
        return received.length > 0;
      });
      expect(received[0]).toBe('ping');
      expect(other).toEqual([]);
    });

    it('reports the time of its own clock in milliseconds', async () => {
      const time = await store.time();
      expect(Math.abs(time - Date.now())).toBeLessThan(366 * 86_400_000 * 10);
      expect(Number.isInteger(time)).toBe(true);
    });

    it('caches an answer for its TTL: a miss before, a hit during, a miss after', async () => {
      const key = responseCacheKey({ team: 't', scopeTag: 'team', model: 'ttl', hash: 'a1' });
      expect(await store.cacheGet(key)).toBeUndefined();
      await store.cacheSet(key, '{"answer":1}', 40);
      expect(await store.cacheGet(key)).toBe('{"answer":1}');
      await harness.advance(80);
      expect(await store.cacheGet(key)).toBeUndefined();
    });

    it('records the TTL with the entry itself', async () => {
      const key = responseCacheKey({ team: 't', scopeTag: 'team', model: 'pttl', hash: 'a1' });
      await store.cacheSet(key, 'v', 60_000);
      if (harness.remainingTtlMs) {
        const remaining = await harness.remainingTtlMs(key);
        expect(remaining).toBeGreaterThan(50_000);
        expect(remaining).toBeLessThanOrEqual(60_000);
      }
      await harness.advance(100);
      expect(await store.cacheGet(key)).toBe('v');
    });

    it('deletes cache entries by team, by model, by both and all of them, counting what it deleted', async () => {
      const key = (team: string | null, model: string) =>
        responseCacheKey({ team, scopeTag: 'team', model, hash: 'ff' });
      const fill = async () => {
        for (const team of ['pa', 'pb', null])
          for (const model of ['m/1', 'm*2']) await store.cacheSet(key(team, model), 'v', 60_000);
      };
      await fill();
      expect(await store.cacheDelete(responseCachePattern({ team: 'pa' }))).toBe(2);
      expect(await store.cacheGet(key('pa', 'm/1'))).toBeUndefined();
      expect(await store.cacheGet(key('pb', 'm/1'))).toBe('v');
      expect(await store.cacheDelete(responseCachePattern({ model: 'm*2' }))).toBe(2);
      expect(await store.cacheGet(key('pb', 'm*2'))).toBeUndefined();
      expect(await store.cacheGet(key('pb', 'm/1'))).toBe('v');
      expect(await store.cacheDelete(responseCachePattern({ team: 'pb', model: 'm/1' }))).toBe(1);
      expect(await store.cacheGet(key(null, 'm/1'))).toBe('v');
      await fill();
      await store.set('rate-counter', '1', 60_000);
      expect(await store.cacheDelete(responseCachePattern({}))).toBeGreaterThanOrEqual(6);
      expect(await store.cacheGet(key(null, 'm/1'))).toBeUndefined();
      expect(await store.get('rate-counter')).toBe('1');
    });

    it('keeps the cache entries of another store apart (another key prefix)', async () => {
      const sibling = await harness.createSibling();
      try {
        const key = responseCacheKey({ team: 'iso', scopeTag: 'team', model: 'm', hash: '01' });
        await store.cacheSet(key, 'mine', 60_000);
        expect(await sibling.cacheGet(key)).toBeUndefined();
        await sibling.cacheSet(key, 'theirs', 60_000);
        expect(await sibling.cacheDelete(responseCachePattern({ team: 'iso' }))).toBe(1);
        expect(await store.cacheGet(key)).toBe('mine');
      } finally {
        await sibling.close();
      }
    });

    it('answers ping and reports itself available', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
      expect(store.isAvailable()).toBe(true);
    });
  });
}

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await condition()) return;
    await delay(20);
  }
  throw new Error('condition not met within 1 s');
}
