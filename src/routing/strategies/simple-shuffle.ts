/** simple-shuffle: random, in proportion to each deployment's `params.weight`. */
import { type RoutingStrategy, weightedPick } from '../routing-strategy.ts';

export const simpleShuffle: RoutingStrategy = {
  pick: (candidates, context) => weightedPick(candidates, context.random),
};
