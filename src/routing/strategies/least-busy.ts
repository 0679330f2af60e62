/** least-busy: the deployment with the fewest requests in flight in this process. */
import { lowestBy, type RoutingStrategy } from '../routing-strategy.ts';

export const leastBusy: RoutingStrategy = {
  pick: (candidates, context) =>
    lowestBy(candidates, (deployment) => context.health.state(deployment.id).inFlight, context.random),
};
