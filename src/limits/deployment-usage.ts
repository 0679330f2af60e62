/**
 * Minute counters of requests and tokens per deployment, in this process. They satisfy routing's
 * CapacitySignal by shape (usage-based routing, RateLimitAwareStrategy) and are fed by the router
 * (attempts) and the proxy (tokens from upstream usage).
 */
import type { Clock } from '../lib/clock.ts';

interface Counters {
  requests: number;
  tokens: number;
}

const EMPTY: Readonly<Counters> = Object.freeze({ requests: 0, tokens: 0 });

export class DeploymentUsageCounters {
  private readonly clock: Clock;
  private minute = -1;
  private counters = new Map<string, Counters>();

  constructor(clock: Clock) {
    this.clock = clock;
  }

  minuteUsage(deploymentId: string): Readonly<Counters> {
    this.roll();
    return this.counters.get(deploymentId) ?? EMPTY;
  }

  attemptStarted(deploymentId: string): void {
    this.current(deploymentId).requests++;
  }

  tokensUsed(deploymentId: string, tokens: number): void {
    if (tokens > 0) this.current(deploymentId).tokens += tokens;
  }

  private current(deploymentId: string): Counters {
    this.roll();
    let counters = this.counters.get(deploymentId);
    if (!counters) {
      counters = { requests: 0, tokens: 0 };
      this.counters.set(deploymentId, counters);
    }
    return counters;
  }

  /** Counters start fresh at each minute boundary. */
  private roll(): void {
    const minute = Math.floor(this.clock.now() / 60_000);
    if (minute !== this.minute) {
      this.minute = minute;
      this.counters = new Map();
    }
  }
}
