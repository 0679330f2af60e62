/**
 * Conformance of what an admission holds while its request is in flight, for every store
 * implementation: budget reservations (held in the admission round trip, replaced by the cost at
 * settlement, freed by their lease), lease renewal and release, and deadlines (an admission that
 * reaches the store after its deadline changes nothing). Time is injected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  AdmissionRequest,
  BudgetCheck,
  ReservationLease,
} from '../../src/store/shared/rate-limit-counters.ts';
import { SharedStoreUnavailableError } from '../../src/store/shared/shared-store.ts';
import type { RateLimitHarness } from './rate-limit-store-suite.ts';
import { uniqueName } from './unique-name.ts';

const at = (iso: string) => Date.parse(iso);
const DOLLAR = 1_000_000;

export function runLeaseStoreSuite(name: string, create: () => Promise<RateLimitHarness>): void {
  describe(`leases and reservations: ${name}`, () => {
    let harness: RateLimitHarness;
    beforeAll(async () => {
      harness = await create();
    });
    afterAll(async () => harness?.close());

    const budget = (limit: number | null): BudgetCheck => ({
      key: uniqueName('bg'),
      durationMs: 86_400_000,
      limit,
    });
    const reserving = (budgets: BudgetCheck[], member: string, amount: number): AdmissionRequest => ({
      checks: [],
      budgets,
      reservation: { member, amount, leaseMs: 15_000 },
    });
    const lease = (check: BudgetCheck, member: string, amount: number): ReservationLease => ({
      key: check.key,
      member,
      amount,
    });

    it('refuses when spend, reservations in flight and this reservation would pass the budget', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const dollar = budget(DOLLAR);
      for (let index = 0; index < 5; index++) {
        const admitted = await harness.store.admit(reserving([dollar], `r${index}`, 0.2 * DOLLAR));
        expect(admitted).toMatchObject({ admitted: true, spent: [0] });
      }
      expect(await harness.store.admit(reserving([dollar], 'r5', 0.2 * DOLLAR))).toMatchObject({
        admitted: false,
        failed: 1,
        count: 0,
        reserved: DOLLAR,
      });
      // A request of unknown price reserves nothing, but a budget held in full refuses it too.
      expect(await harness.store.admit({ checks: [], budgets: [dollar] })).toMatchObject({ admitted: false });
    });

    it('replaces a reservation by the real cost at settlement, and a release twice changes nothing', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const dollar = budget(DOLLAR);
      for (const member of ['a', 'b', 'c', 'd', 'e'])
        await harness.store.admit(reserving([dollar], member, 0.2 * DOLLAR));
      const settlement = {
        adjustments: [],
        budgets: [{ key: dollar.key, durationMs: dollar.durationMs, amount: 0.05 * DOLLAR }],
        release: { reservations: [lease(dollar, 'a', 0.2 * DOLLAR)] },
      };
      await harness.store.settle(settlement);
      await harness.store.settle({ adjustments: [], release: settlement.release });
      // $0.05 spent + $0.80 reserved: room for $0.15, not for $0.20.
      expect(await harness.store.admit(reserving([dollar], 'f', 0.2 * DOLLAR))).toMatchObject({
        admitted: false,
        count: 0.05 * DOLLAR,
        reserved: 0.8 * DOLLAR,
      });
      expect(await harness.store.admit(reserving([dollar], 'g', 0.15 * DOLLAR))).toMatchObject({
        admitted: true,
        spent: [0.05 * DOLLAR],
      });
    });

    it('holds a reservation only on budgets with a limit (a soft budget is read, never held)', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const soft = budget(null);
      const hard = budget(10 * DOLLAR);
      for (let index = 0; index < 3; index++)
        await harness.store.admit(reserving([soft, hard], `s${index}`, 3 * DOLLAR));
      expect(await harness.store.admit(reserving([soft, hard], 's3', 3 * DOLLAR))).toMatchObject({
        admitted: false,
        failed: 2,
        reserved: 9 * DOLLAR,
      });
      expect(await harness.store.admit(reserving([soft], 'only-soft', 3 * DOLLAR))).toMatchObject({
        admitted: true,
      });
    });

    it('frees a reservation that is never settled when its lease ends', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const dollar = budget(DOLLAR);
      expect((await harness.store.admit(reserving([dollar], 'dead', DOLLAR))).admitted).toBe(true);
      harness.clock.advance(14_999);
      expect((await harness.store.admit(reserving([dollar], 'next', 1))).admitted).toBe(false);
      harness.clock.advance(1);
      expect(await harness.store.admit(reserving([dollar], 'next', DOLLAR))).toMatchObject({
        admitted: true,
      });
    });

    it('renews live leases past their first term, and an expired lease stays ended', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const dollar = budget(DOLLAR);
      const key = uniqueName('slot');
      const held = await harness.store.admit({
        ...reserving([dollar], 'kept', DOLLAR),
        slot: { key, limit: 1, member: 'kept', leaseMs: 15_000 },
      });
      expect(held.admitted).toBe(true);
      const leases = { slots: [{ key, member: 'kept' }], reservations: [lease(dollar, 'kept', DOLLAR)] };
      harness.clock.advance(10_000);
      await harness.store.settle({ adjustments: [], renew: { ...leases, leaseMs: 15_000 } });
      harness.clock.advance(10_000); // 20 s after admission: held by the renewal
      expect(
        await harness.store.admit({ checks: [], slot: { key, limit: 1, member: 'other', leaseMs: 15_000 } }),
      ).toMatchObject({ admitted: false, count: 1 });
      expect((await harness.store.admit(reserving([dollar], 'other', 1))).admitted).toBe(false);
      harness.clock.advance(5_000); // the renewed term ended: a renewal now comes too late
      await harness.store.settle({ adjustments: [], renew: { ...leases, leaseMs: 15_000 } });
      expect(
        (await harness.store.admit({ checks: [], slot: { key, limit: 1, member: 'late', leaseMs: 15_000 } }))
          .admitted,
      ).toBe(true);
      expect((await harness.store.admit(reserving([dollar], 'late', DOLLAR))).admitted).toBe(true);
    });

    it('changes nothing when an admission reaches the store after its deadline', async () => {
      harness.clock.set(at('2026-11-23T12:00:00Z'));
      const counter = { key: uniqueName('c'), window: 'minute' as const, limit: 1, amount: 1 };
      const dollar = budget(DOLLAR);
      const key = uniqueName('slot');
      const late = harness.store.admit({
        ...reserving([dollar], 'late', DOLLAR),
        checks: [counter],
        slot: { key, limit: 1, member: 'late', leaseMs: 15_000 },
        deadline: harness.clock.now() - 1,
      });
      await expect(late).rejects.toBeInstanceOf(SharedStoreUnavailableError);
      await expect(late).rejects.toMatchObject({ failure: 'late' });
      // Nothing was counted, held or reserved: each limit still has its whole room.
      expect(
        await harness.store.admit({
          ...reserving([dollar], 'on-time', DOLLAR),
          checks: [counter],
          slot: { key, limit: 1, member: 'on-time', leaseMs: 15_000 },
          deadline: harness.clock.now(),
        }),
      ).toMatchObject({ admitted: true, counts: [1] });
    });
  });
}
