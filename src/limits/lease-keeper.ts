/**
 * Keeps the leases of this process's requests in flight (parallel slots, budget reservations) alive:
 * leases are short, so a dead process or an abandoned admission holds nothing for long, and every
 * `renewEveryMs` one settlement per store renews all of them at once. A release the store did not take
 * (it was down) is retried on every tick until it does, so a slot freed during an outage is free again
 * as soon as the store answers, not when its lease ends. Releases and renewals are idempotent.
 */
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../observability/logger.ts';
import type {
  LeaseSet,
  ReservationLease,
  SettlementRequest,
  SlotLease,
} from '../store/shared/rate-limit-counters.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';

/** How long a lease lives without renewal: a crashed process's slots are free again after it. */
export const LEASE_MS = 15_000;
/** Renewal period: a lease survives two failed renewals in a row. */
export const RENEW_EVERY_MS = 5_000;
const TICK_MS = 1_000;
/** Releases waiting for a store that is down; past this many the oldest are left to expire. */
const MAX_PENDING = 10_000;

export interface LeaseKeeperOptions {
  clock: Clock;
  logger: Logger;
  leaseMs?: number;
  renewEveryMs?: number;
}

interface Pending {
  leases: LeaseSet;
  /** After this the lease expired by itself and needs no release. */
  until: number;
}

interface StoreLeases {
  held: Set<LeaseSet>;
  pending: Pending[];
  renewedAt: number;
  busy: boolean;
}

export class LeaseKeeper {
  readonly leaseMs: number;
  private readonly options: LeaseKeeperOptions;
  private readonly stores = new Map<SharedStore, StoreLeases>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(options: LeaseKeeperOptions) {
    this.options = options;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
  }

  /** Ticks every second from the first lease held until `stop` (unref'd: it keeps no process alive). */
  private start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Renews `leases` on `store` until the returned function is called (at settlement). */
  hold(store: SharedStore, leases: LeaseSet): () => void {
    this.start();
    const entry = this.entry(store);
    entry.held.add(leases);
    return () => {
      entry.held.delete(leases);
    };
  }

  /** A release the store did not take: retried on every tick until it does or the lease expired. */
  retryRelease(store: SharedStore, leases: LeaseSet): void {
    const entry = this.entry(store);
    if (entry.pending.length >= MAX_PENDING) {
      entry.pending.shift();
      this.options.logger.warn(
        { waiting: MAX_PENDING },
        'too many releases wait for the shared store; the oldest is left to expire with its lease',
      );
    }
    entry.pending.push({ leases, until: this.options.clock.now() + this.leaseMs });
  }

  /** Leases currently renewed and releases waiting, for diagnostics and tests. */
  counts(store: SharedStore): { held: number; pending: number } {
    const entry = this.stores.get(store);
    return { held: entry?.held.size ?? 0, pending: entry?.pending.length ?? 0 };
  }

  /** One round: per store, one settlement with the waiting releases and, when due, every renewal. */
  async tick(): Promise<void> {
    const now = this.options.clock.now();
    await Promise.all(
      [...this.stores].map(async ([store, entry]) => {
        if (entry.busy) return;
        entry.pending = entry.pending.filter((item) => item.until > now);
        const renew =
          entry.held.size > 0 && now - entry.renewedAt >= (this.options.renewEveryMs ?? RENEW_EVERY_MS);
        if (!renew && entry.pending.length === 0) {
          if (entry.held.size === 0) this.stores.delete(store);
          return;
        }
        const sent = entry.pending;
        const request: SettlementRequest = {
          adjustments: [],
          ...(sent.length > 0 ? { release: merge(sent.map((item) => item.leases)) } : {}),
          ...(renew ? { renew: { ...merge(entry.held), leaseMs: this.leaseMs } } : {}),
        };
        entry.busy = true;
        try {
          await store.settle(request);
          entry.pending = entry.pending.filter((item) => !sent.includes(item));
          if (renew) entry.renewedAt = now;
        } catch {
          // Tried again on the next tick; a lease not renewed in time ends by itself.
        } finally {
          entry.busy = false;
        }
      }),
    );
  }

  private entry(store: SharedStore): StoreLeases {
    let entry = this.stores.get(store);
    if (!entry) {
      entry = { held: new Set(), pending: [], renewedAt: this.options.clock.now(), busy: false };
      this.stores.set(store, entry);
    }
    return entry;
  }
}

function merge(sets: Iterable<LeaseSet>): { slots: SlotLease[]; reservations: ReservationLease[] } {
  const slots: SlotLease[] = [];
  const reservations: ReservationLease[] = [];
  for (const set of sets) {
    if (set.slots) slots.push(...set.slots);
    if (set.reservations) reservations.push(...set.reservations);
  }
  return { slots, reservations };
}
