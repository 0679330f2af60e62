/**
 * Deployment capacity counters (requests and tokens per minute, shared by every replica through the
 * store). Routing reads them through a per-request snapshot taken in the admission round trip; the
 * answer's settlement adds the attempt and its real tokens. Identity and deployment counters never mix.
 */
import type { CounterAdjustment } from '../store/shared/rate-limit-counters.ts';

export interface DeploymentUsageSnapshot {
  minuteUsage(deploymentId: string): { requests: number; tokens: number };
  attemptStarted(deploymentId: string): void;
}

export class DeploymentCapacity {
  /** Whether routing needs usage at all (pre-call checks or a usage-aware strategy). */
  readonly enabled: boolean;

  constructor(enabled: boolean) {
    this.enabled = enabled;
  }

  /** The counters to read for these deployments (requests and tokens of each, in order). */
  readKeys(deploymentIds: readonly string[]): string[] {
    if (!this.enabled) return [];
    return deploymentIds.flatMap((id) => [requestsKey(id), tokensKey(id)]);
  }

  /** A per-request view of usage from the values read; attempts made during the request add to it. */
  snapshot(deploymentIds: readonly string[], reads: readonly number[]): DeploymentUsageSnapshot {
    const usage = new Map<string, { requests: number; tokens: number }>();
    deploymentIds.forEach((id, index) => {
      usage.set(id, { requests: reads[index * 2] ?? 0, tokens: reads[index * 2 + 1] ?? 0 });
    });
    return {
      minuteUsage: (id) => usage.get(id) ?? { requests: 0, tokens: 0 },
      attemptStarted: (id) => {
        const current = usage.get(id) ?? { requests: 0, tokens: 0 };
        usage.set(id, { requests: current.requests + 1, tokens: current.tokens });
      },
    };
  }

  /** What an answered attempt adds to its deployment's counters. */
  settlement(deploymentId: string, tokens: number | undefined): CounterAdjustment[] {
    if (!this.enabled) return [];
    const adjustments: CounterAdjustment[] = [
      { key: requestsKey(deploymentId), window: 'minute', delta: 1, createMinute: true },
    ];
    if (tokens !== undefined && tokens > 0)
      adjustments.push({ key: tokensKey(deploymentId), window: 'minute', delta: tokens, createMinute: true });
    return adjustments;
  }
}

function requestsKey(deploymentId: string): string {
  return `dep:${deploymentId}:requests`;
}

function tokensKey(deploymentId: string): string {
  return `dep:${deploymentId}:tokens`;
}
