/**
 * Throttles failing credentials, on every surface that takes a key (/v1, /mcp, /ui/api: the master
 * key authenticates on all three). A client address whose unknown keys failed more than 20 times in
 * the current minute has each further unknown key answered 429 until the minute ends. A valid key is
 * never refused by the throttle: it is checked and served whatever its address did before, so clients
 * sharing an address with a guesser (behind a load balancer or NAT) keep working (issues 9 and 25).
 * Per process and in memory: failures are rare, and each replica throttling on its own still bounds
 * how often a guesser is answered 401 by the replica count.
 */
import type { Clock } from '../lib/clock.ts';

export const MAX_FAILED_AUTHENTICATIONS_PER_MINUTE = 20;
/** Addresses tracked at most per minute, so a flood of spoofed sources cannot grow memory. */
const MAX_TRACKED_ADDRESSES = 10_000;
const WINDOW_MS = 60_000;

export class AuthFailureThrottle {
  private readonly clock: Clock;
  private window = -1;
  private failures = new Map<string, number>();

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /**
   * Counts a failed authentication from `address`. Returns the seconds until the address's failures
   * are answered with 401 again, or 0 while it is within the limit (this failure included).
   */
  failed(address: string): number {
    this.roll();
    const count = (this.failures.get(address) ?? 0) + 1;
    if (this.failures.size < MAX_TRACKED_ADDRESSES || this.failures.has(address))
      this.failures.set(address, count);
    if (count <= MAX_FAILED_AUTHENTICATIONS_PER_MINUTE) return 0;
    return Math.max(1, Math.ceil(((this.window + 1) * WINDOW_MS - this.clock.now()) / 1000));
  }

  private roll(): void {
    const window = Math.floor(this.clock.now() / WINDOW_MS);
    if (window === this.window) return;
    this.window = window;
    this.failures = new Map();
  }
}
