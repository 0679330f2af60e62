/**
 * What one caller request is charged: its admission, then the real usage of every provider call made
 * for it (one, or each model turn of an MCP tool loop), settled once when the request is over. Settling
 * corrects the token counters, adds deployment usage and frees the in-flight slot.
 */
import type { Usage } from '../canonical/usage.ts';
import type { AdmissionTicket } from '../limits/caller-admission.ts';
import type { DeploymentCapacity, DeploymentUsageSnapshot } from '../limits/deployment-capacity.ts';
import type { CounterAdjustment } from '../store/shared/rate-limit-counters.ts';

export class RequestCharge {
  readonly ticket: AdmissionTicket;
  /** Deployment usage read at admission, for routing every call of this request. */
  readonly capacity: DeploymentUsageSnapshot;
  private readonly deploymentCapacity: DeploymentCapacity;
  private readonly adjustments: CounterAdjustment[] = [];
  private tokens = 0;
  private calls = 0;
  private usageUnknown = false;
  private settled = false;

  constructor(
    ticket: AdmissionTicket,
    deploymentCapacity: DeploymentCapacity,
    deploymentIds: readonly string[],
  ) {
    this.ticket = ticket;
    this.deploymentCapacity = deploymentCapacity;
    this.capacity = deploymentCapacity.snapshot(deploymentIds, ticket.reads);
  }

  /** A provider call for this request answered, with this usage (undefined when the provider gave none). */
  answered(deploymentId: string, usage: Usage | undefined): void {
    this.calls++;
    if (usage) this.tokens += usage.total_tokens;
    else this.usageUnknown = true;
    this.adjustments.push(...this.deploymentCapacity.settlement(deploymentId, usage?.total_tokens));
  }

  /** Ends the request's charge (later calls resolve at once); resolves when the store has taken it. */
  settle(): Promise<void> {
    if (this.settled) return Promise.resolve();
    this.settled = true;
    const known = this.calls > 0 && !this.usageUnknown;
    return this.ticket.settle({
      totalTokens: known ? this.tokens : undefined,
      adjustments: this.adjustments,
    });
  }
}
