/** usage-based-routing: the deployment that used the fewest tokens (then requests) this minute. */
import { lowestBy, type RoutingStrategy } from '../routing-strategy.ts';

export const usageBased: RoutingStrategy = {
  pick: (candidates, context) =>
    lowestBy(
      candidates,
      (deployment) => {
        const usage = context.capacity.minuteUsage(deployment.id);
        // Tokens dominate; requests break ties between deployments with equal token use.
        return usage.tokens * 1_000_000 + usage.requests;
      },
      context.random,
    ),
};
