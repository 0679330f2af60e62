/**
 * The offset between this process's clock and the store's (Redis TIME), learned from replies that carry
 * the store's time, so an admission can be given a deadline in the store's clock. A reply's store time
 * was taken between the command's send and its reply, so the offset lies in [storeNow − receivedAt,
 * storeNow − sentAt]; the estimate is moved into each new interval, which follows a clock step at once
 * and stays within one round trip of the truth.
 */
import type { Clock } from '../../lib/clock.ts';

export class StoreClockOffset {
  private readonly clock: Clock;
  private offset: number | undefined;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** This process's time now, for `observe`. */
  now(): number {
    return this.clock.now();
  }

  /** A reply carrying the store's time `storeNow`, to a command sent at `sentAt` (this process's time). */
  observe(storeNow: number, sentAt: number, receivedAt = this.clock.now()): void {
    const low = storeNow - receivedAt;
    const high = storeNow - sentAt;
    if (this.offset === undefined) this.offset = Math.round((low + high) / 2);
    else if (this.offset < low) this.offset = low;
    else if (this.offset > high) this.offset = high;
  }

  /** The store's time at this process's time `local` (now by default); undefined until a reply was seen. */
  storeTime(local = this.clock.now()): number | undefined {
    return this.offset === undefined ? undefined : local + this.offset;
  }
}
