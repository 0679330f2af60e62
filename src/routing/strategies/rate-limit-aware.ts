/**
 * RateLimitAwareStrategy: deployments above 90% of their rpm_limit or tpm_limit this minute are
 * deprioritised; the rest are shuffled by weight. When every one is above 90%, the least utilised wins.
 */
import type { CapacitySignal } from '../capacity-signal.ts';
import type { Deployment } from '../model-registry.ts';
import { lowestBy, type RoutingStrategy, weightedPick } from '../routing-strategy.ts';

const DEPRIORITISE_ABOVE = 0.9;

export const rateLimitAware: RoutingStrategy = {
  pick(candidates, context) {
    const roomy = candidates.filter(
      (deployment) => utilization(deployment, context.capacity) <= DEPRIORITISE_ABOVE,
    );
    if (roomy.length > 0) return weightedPick(roomy, context.random);
    return lowestBy(candidates, (deployment) => utilization(deployment, context.capacity), context.random);
  },
};

/** The higher of request and token utilisation against the deployment's minute limits (0 without limits). */
export function utilization(deployment: Deployment, capacity: CapacitySignal): number {
  const usage = capacity.minuteUsage(deployment.id);
  const requests = deployment.rpmLimit ? usage.requests / deployment.rpmLimit : 0;
  const tokens = deployment.tpmLimit ? usage.tokens / deployment.tpmLimit : 0;
  return Math.max(requests, tokens);
}
