/**
 * In-flight leases in process memory, the twin of the Redis slot sets and reservation sets: parallel
 * slots per key and budget reservations per budget, each with an expiry that renewal moves and after
 * which the lease counts for nothing.
 */
import type { LeaseSet } from './rate-limit-counters.ts';

interface Reservations {
  /** `<member>|<amount>` → amount and expiry (the same identity as the Redis sorted set's members). */
  held: Map<string, { amount: number; expiresAt: number }>;
  sum: number;
  /** No lease expires before this; a sweep is needed only once it passed. */
  earliest: number;
}

export class MemoryLeases {
  private readonly slotSets = new Map<string, Map<string, number>>();
  private readonly reservationSets = new Map<string, Reservations>();

  /** The live leases of a slot set (member → expiry), created when absent. */
  slots(key: string, now: number): Map<string, number> {
    let leases = this.slotSets.get(key);
    if (!leases) {
      leases = new Map();
      this.slotSets.set(key, leases);
    }
    for (const [member, expiresAt] of leases) if (expiresAt <= now) leases.delete(member);
    return leases;
  }

  /** The sum of the live reservations on a budget. */
  reserved(budget: string, now: number): number {
    const set = this.reservationSets.get(budget);
    if (!set) return 0;
    if (now >= set.earliest) this.sweepReservations(budget, set, now);
    return set.sum;
  }

  reserve(budget: string, member: string, amount: number, expiresAt: number): void {
    let set = this.reservationSets.get(budget);
    if (!set) {
      set = { held: new Map(), sum: 0, earliest: expiresAt };
      this.reservationSets.set(budget, set);
    }
    set.held.set(`${member}|${amount}`, { amount, expiresAt });
    set.sum += amount;
    set.earliest = Math.min(set.earliest, expiresAt);
  }

  release(leases: LeaseSet): void {
    for (const slot of leases.slots ?? []) this.slotSets.get(slot.key)?.delete(slot.member);
    for (const lease of leases.reservations ?? []) {
      const set = this.reservationSets.get(lease.key);
      const id = `${lease.member}|${Math.round(lease.amount)}`;
      const held = set?.held.get(id);
      if (!set || !held) continue;
      set.held.delete(id);
      set.sum -= held.amount;
      if (set.held.size === 0) this.reservationSets.delete(lease.key);
    }
  }

  /** Moves every live lease of `leases` to expire at now + leaseMs; expired ones stay ended. */
  renew(leases: LeaseSet & { leaseMs: number }, now: number): void {
    const expiresAt = now + leases.leaseMs;
    for (const slot of leases.slots ?? []) {
      const set = this.slotSets.get(slot.key);
      const current = set?.get(slot.member);
      if (set && current !== undefined && current > now) set.set(slot.member, expiresAt);
    }
    for (const lease of leases.reservations ?? []) {
      const held = this.reservationSets
        .get(lease.key)
        ?.held.get(`${lease.member}|${Math.round(lease.amount)}`);
      if (held && held.expiresAt > now) held.expiresAt = expiresAt;
    }
  }

  /** Drops every expired lease (now and then, so sets that are never read again do not pile up). */
  sweep(now: number): void {
    for (const [key, leases] of this.slotSets) {
      for (const [member, expiresAt] of leases) if (expiresAt <= now) leases.delete(member);
      if (leases.size === 0) this.slotSets.delete(key);
    }
    for (const [budget, set] of this.reservationSets) this.sweepReservations(budget, set, now);
  }

  private sweepReservations(budget: string, set: Reservations, now: number): void {
    let earliest = Number.POSITIVE_INFINITY;
    for (const [id, held] of set.held) {
      if (held.expiresAt <= now) {
        set.held.delete(id);
        set.sum -= held.amount;
      } else earliest = Math.min(earliest, held.expiresAt);
    }
    set.earliest = earliest;
    if (set.held.size === 0) this.reservationSets.delete(budget);
  }
}
