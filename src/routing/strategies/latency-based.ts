/**
 * latency-based-routing: the deployment with the lowest recent latency (time to first token for
 * streams, total latency otherwise). Unmeasured deployments go first so they get measured; deployments
 * within `lowest_latency_buffer` (a fraction) of the fastest count as equally fast.
 */
import { lowestBy, type RoutingStrategy } from '../routing-strategy.ts';

export function latencyBased(buffer: number): RoutingStrategy {
  return {
    pick: (candidates, context) =>
      lowestBy(
        candidates,
        (deployment) => context.health.freshLatency(deployment.id, context.streaming) ?? 0,
        context.random,
        buffer,
      ),
  };
}
