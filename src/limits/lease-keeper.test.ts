import { describe, expect, it, vi } from 'vitest';
import type { Logger } from '../observability/logger.ts';
import { MemorySharedStore } from '../store/shared/memory-shared-store.ts';
import type { LeaseSet } from '../store/shared/rate-limit-counters.ts';
import { SharedStoreUnavailableError } from '../store/shared/shared-store.ts';
import { LEASE_MS, LeaseKeeper } from './lease-keeper.ts';

function setUp() {
  let now = Date.parse('2026-11-23T12:00:00Z');
  const clock = { now: () => now };
  const store = new MemorySharedStore(clock);
  const keeper = new LeaseKeeper({ clock, logger: { warn: () => {} } as unknown as Logger });
  /** Takes one of `limit` slots of `key` for `member`, as an admission would. */
  const take = async (key: string, member: string, limit = 1) =>
    (await store.admit({ checks: [], slot: { key, limit, member, leaseMs: keeper.leaseMs } })).admitted;
  return { store, keeper, take, advance: (ms: number) => (now += ms) };
}

const slotOf = (key: string, member: string): LeaseSet => ({ slots: [{ key, member }], reservations: [] });

describe('LeaseKeeper', () => {
  it('keeps the leases of requests in flight alive past their term, in one settlement per store', async () => {
    const { store, keeper, take, advance } = setUp();
    expect(await take('a', 'held')).toBe(true);
    expect(await take('b', 'held')).toBe(true);
    const settles = vi.spyOn(store, 'settle');
    keeper.hold(store, slotOf('a', 'held'));
    keeper.hold(store, slotOf('b', 'held'));
    for (let second = 0; second < 3 * (LEASE_MS / 1000); second++) {
      advance(1_000);
      await keeper.tick();
    }
    expect(await take('a', 'other')).toBe(false);
    expect(await take('b', 'other')).toBe(false);
    // Renewed every 5 s: 9 times in 45 s, both leases in each one.
    expect(settles).toHaveBeenCalledTimes(9);
    expect(settles.mock.calls[0]![0].renew?.slots).toHaveLength(2);
    keeper.stop();
  });

  it('stops renewing at settlement, so an abandoned lease ends with its term', async () => {
    const { store, keeper, take, advance } = setUp();
    await take('a', 'held');
    const end = keeper.hold(store, slotOf('a', 'held'));
    end();
    advance(LEASE_MS);
    await keeper.tick();
    expect(await take('a', 'other')).toBe(true);
    expect(keeper.counts(store)).toEqual({ held: 0, pending: 0 });
  });

  it('retries a release the store did not take until it does, and frees the slot then', async () => {
    const { store, keeper, take, advance } = setUp();
    await take('a', 'held');
    const down = vi
      .spyOn(store, 'settle')
      .mockRejectedValue(new SharedStoreUnavailableError('down', 'disconnected'));
    keeper.retryRelease(store, slotOf('a', 'held'));
    advance(1_000);
    await keeper.tick();
    expect(keeper.counts(store).pending).toBe(1);
    down.mockRestore();
    advance(1_000);
    await keeper.tick();
    expect(keeper.counts(store).pending).toBe(0);
    expect(await take('a', 'other')).toBe(true);
  });

  it('drops a waiting release once its lease has ended by itself', async () => {
    const { store, keeper, advance } = setUp();
    vi.spyOn(store, 'settle').mockRejectedValue(new SharedStoreUnavailableError('down', 'disconnected'));
    keeper.retryRelease(store, slotOf('a', 'held'));
    advance(LEASE_MS + 1);
    await keeper.tick();
    expect(keeper.counts(store).pending).toBe(0);
  });
});
