/** The strategy named by `router_settings.routing_strategy`. */
import type { RouterSettings } from '../../config/config.ts';
import type { RoutingStrategy } from '../routing-strategy.ts';
import { latencyBased } from './latency-based.ts';
import { leastBusy } from './least-busy.ts';
import { rateLimitAware } from './rate-limit-aware.ts';
import { simpleShuffle } from './simple-shuffle.ts';
import { usageBased } from './usage-based.ts';

export function createStrategy(settings: Readonly<RouterSettings>): RoutingStrategy {
  switch (settings.routing_strategy) {
    case 'least-busy':
      return leastBusy;
    case 'latency-based-routing':
      return latencyBased(settings.routing_strategy_args.lowest_latency_buffer);
    case 'usage-based-routing':
    case 'usage-based-routing-v2':
      return usageBased;
    case 'RateLimitAwareStrategy':
      return rateLimitAware;
    case 'simple-shuffle':
      return simpleShuffle;
  }
}
