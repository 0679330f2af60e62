/**
 * Slows down guessing of admin credentials: a client address with 20 failed admin authentications in
 * the current minute gets 429 until the minute ends (issue 9). Per process and in memory: failures are
 * rare, and each replica throttling on its own still bounds the guessing rate by the replica count.
 */
import type { Clock } from '../lib/clock.ts';

export const MAX_FAILED_ADMIN_AUTHENTICATIONS_PER_MINUTE = 20;
/** Addresses tracked at most per minute, so a flood of spoofed sources cannot grow memory. */
const MAX_TRACKED_ADDRESSES = 10_000;
const WINDOW_MS = 60_000;

export class AdminAuthThrottle {
  private readonly clock: Clock;
  private window = -1;
  private failures = new Map<string, number>();

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** Seconds until `address` may try again, or 0 when it may try now. */
  retryAfterSeconds(address: string): number {
    this.roll();
    if ((this.failures.get(address) ?? 0) < MAX_FAILED_ADMIN_AUTHENTICATIONS_PER_MINUTE) return 0;
    return Math.max(1, Math.ceil(((this.window + 1) * WINDOW_MS - this.clock.now()) / 1000));
  }

  failed(address: string): void {
    this.roll();
    if (this.failures.size >= MAX_TRACKED_ADDRESSES && !this.failures.has(address)) return;
    this.failures.set(address, (this.failures.get(address) ?? 0) + 1);
  }

  private roll(): void {
    const window = Math.floor(this.clock.now() / WINDOW_MS);
    if (window === this.window) return;
    this.window = window;
    this.failures = new Map();
  }
}
