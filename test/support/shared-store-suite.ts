/** One conformance suite for every SharedStore implementation (STYLE convention 13). */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SharedStore } from '../../src/store/shared/shared-store.ts';

export interface StoreHarness {
  store: SharedStore;
  /** Moves time forward by at least `milliseconds` (a manual clock, or real waiting for Redis). */
  advance(milliseconds: number): Promise<void>;
  close(): Promise<void>;
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
