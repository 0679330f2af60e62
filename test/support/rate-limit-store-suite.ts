/**
 * Conformance of atomic rate limiting (SharedStore.admit / settle) for every store implementation, with
 * time injected so window boundaries are crossed without sleeping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CounterCheck } from '../../src/store/shared/rate-limit-counters.ts';
import { windowKey } from '../../src/store/shared/rate-limit-counters.ts';
import type { SharedStore } from '../../src/store/shared/shared-store.ts';
import type { ManualClock } from './manual-clock.ts';
import { uniqueName } from './unique-name.ts';

export interface RateLimitHarness {
  store: SharedStore;
  clock: ManualClock;
  close(): Promise<void>;
}

const at = (iso: string) => Date.parse(iso);

export function runRateLimitStoreSuite(name: string, create: () => Promise<RateLimitHarness>): void {
  describe(`rate-limit conformance: ${name}`, () => {
    let harness: RateLimitHarness;
    beforeAll(async () => {
      harness = await create();
    });
    afterAll(async () => harness?.close());
    const fresh = (window: CounterCheck['window'], limit: number, amount = 1): CounterCheck => ({
      key: uniqueName('c'),
      window,
      limit,
      amount,
    });

    it('admits up to the limit, then rejects with the failing check and its reset', async () => {
      harness.clock.set(at('2026-11-23T12:00:10Z'));
      const check = fresh('minute', 3);
      for (let index = 1; index <= 3; index++) {
        const result = await harness.store.admit({ checks: [check] });
        expect(result).toMatchObject({
          admitted: true,
          counts: [index],
          resets: [at('2026-11-23T12:01:10Z')],
        });
      }
      const rejected = await harness.store.admit({ checks: [check] });
      expect(rejected).toMatchObject({
        admitted: false,
        failed: 0,
        count: 3,
        reset: at('2026-11-23T12:01:10Z'),
      });
    });

    it('changes no counter when any check fails (no partial charge)', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const roomy = fresh('minute', 1000);
      const tight = fresh('minute', 2);
      await harness.store.admit({ checks: [roomy, tight] });
      await harness.store.admit({ checks: [roomy, tight] });
      for (let index = 0; index < 5; index++) {
        expect(await harness.store.admit({ checks: [roomy, tight] })).toMatchObject({
          admitted: false,
          failed: 1,
        });
      }
      expect(await harness.store.admit({ checks: [roomy] })).toMatchObject({ admitted: true, counts: [3] });
    });

    it('keeps a minute counter for 60 seconds from its first increment', async () => {
      harness.clock.set(at('2026-11-23T12:00:30Z'));
      const check = fresh('minute', 1);
      await harness.store.admit({ checks: [check] });
      harness.clock.advance(59_999);
      expect((await harness.store.admit({ checks: [check] })).admitted).toBe(false);
      harness.clock.advance(1);
      expect(await harness.store.admit({ checks: [check] })).toMatchObject({ admitted: true, counts: [1] });
    });

    it('ends an hour counter at the top of the clock hour', async () => {
      harness.clock.set(at('2026-11-23T12:59:59Z'));
      const check = fresh('hour', 1);
      expect(await harness.store.admit({ checks: [check] })).toMatchObject({
        admitted: true,
        resets: [at('2026-11-23T13:00:00Z')],
      });
      expect((await harness.store.admit({ checks: [check] })).admitted).toBe(false);
      harness.clock.set(at('2026-11-23T13:00:00Z'));
      expect((await harness.store.admit({ checks: [check] })).admitted).toBe(true);
    });

    it('ends a day counter at midnight UTC', async () => {
      harness.clock.set(at('2026-11-23T23:59:00Z'));
      const check = fresh('day', 1);
      expect(await harness.store.admit({ checks: [check] })).toMatchObject({
        admitted: true,
        resets: [at('2026-11-24T00:00:00Z')],
      });
      expect((await harness.store.admit({ checks: [check] })).admitted).toBe(false);
      harness.clock.set(at('2026-11-24T00:00:01Z'));
      expect((await harness.store.admit({ checks: [check] })).admitted).toBe(true);
    });

    it('rejects a token amount larger than what remains', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const tokens = fresh('minute', 100, 60);
      expect((await harness.store.admit({ checks: [tokens] })).admitted).toBe(true);
      expect(await harness.store.admit({ checks: [tokens] })).toMatchObject({ admitted: false, count: 60 });
    });

    it('bounds in-flight leases, frees one on release, and lets an expired lease go', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const key = uniqueName('slot');
      const slot = (member: string) => ({ key, limit: 2, member, leaseMs: 30_000 });
      expect((await harness.store.admit({ checks: [], slot: slot('a') })).admitted).toBe(true);
      expect((await harness.store.admit({ checks: [], slot: slot('b') })).admitted).toBe(true);
      expect(await harness.store.admit({ checks: [], slot: slot('c') })).toMatchObject({
        admitted: false,
        failed: 0,
        count: 2,
      });
      await harness.store.settle({ adjustments: [], release: { slots: [{ key, member: 'a' }] } });
      expect((await harness.store.admit({ checks: [], slot: slot('c') })).admitted).toBe(true);
      harness.clock.advance(30_001);
      expect((await harness.store.admit({ checks: [], slot: slot('d') })).admitted).toBe(true);
    });

    it('does not take a lease when a counter rejects', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const key = uniqueName('slot');
      const full = fresh('minute', 0);
      expect(
        (await harness.store.admit({ checks: [full], slot: { key, limit: 1, member: 'x', leaseMs: 1_000 } }))
          .admitted,
      ).toBe(false);
      expect(
        (await harness.store.admit({ checks: [], slot: { key, limit: 1, member: 'y', leaseMs: 1_000 } }))
          .admitted,
      ).toBe(true);
    });

    it('corrects token counters by the real usage, never below zero', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const minute = fresh('minute', 10_000, 500);
      const day = fresh('day', 10_000, 500);
      const admitted = await harness.store.admit({ checks: [minute, day] });
      const now = admitted.now;
      await harness.store.settle({
        adjustments: [
          { key: windowKey(minute, now), window: 'minute', delta: -300 },
          { key: windowKey(day, now), window: 'day', delta: 250 },
        ],
      });
      expect(
        await harness.store.admit({
          checks: [
            { ...minute, amount: 0 },
            { ...day, amount: 0 },
          ],
        }),
      ).toMatchObject({ counts: [200, 750] });
      await harness.store.settle({
        adjustments: [{ key: windowKey(minute, now), window: 'minute', delta: -10_000 }],
      });
      expect(await harness.store.admit({ checks: [{ ...minute, amount: 0 }] })).toMatchObject({
        counts: [0],
      });
    });

    it('creates minute usage counters on settlement when asked, and reads them back during admission', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const usage = uniqueName('deployment');
      await harness.store.settle({
        adjustments: [{ key: usage, window: 'minute', delta: 42, createMinute: true }],
      });
      await harness.store.settle({
        adjustments: [{ key: usage, window: 'minute', delta: 8, createMinute: true }],
      });
      expect((await harness.store.admit({ checks: [], reads: [usage, uniqueName('absent')] })).reads).toEqual(
        [50, 0],
      );
      harness.clock.advance(60_000);
      expect((await harness.store.admit({ checks: [], reads: [usage] })).reads).toEqual([0]);
    });
  });
}
