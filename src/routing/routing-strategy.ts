/** How a strategy chooses one deployment among healthy candidates. */
import type { Random } from '../lib/random.ts';
import type { CapacitySignal } from './capacity-signal.ts';
import type { DeploymentHealth } from './deployment-health.ts';
import type { Deployment } from './model-registry.ts';

export interface StrategyContext {
  health: DeploymentHealth;
  capacity: CapacitySignal;
  random: Random;
  streaming: boolean;
}

export interface RoutingStrategy {
  /** Picks one of `candidates` (never empty). */
  pick(candidates: readonly Deployment[], context: StrategyContext): Deployment;
}

/** Weighted random choice by `params.weight` (simple-shuffle's rule, reused as a tie-breaker). */
export function weightedPick(candidates: readonly Deployment[], random: Random): Deployment {
  if (candidates.length === 1) return candidates[0]!;
  let total = 0;
  for (const candidate of candidates) total += candidate.weight;
  let point = random.next() * total;
  for (const candidate of candidates) {
    point -= candidate.weight;
    if (point < 0) return candidate;
  }
  return candidates[candidates.length - 1]!;
}

/** The candidates whose score is the lowest (within `tolerance` of it), picked among by weight. */
export function lowestBy(
  candidates: readonly Deployment[],
  score: (deployment: Deployment) => number,
  random: Random,
  tolerance = 0,
): Deployment {
  let best = Number.POSITIVE_INFINITY;
  const scores = candidates.map((candidate) => {
    const value = score(candidate);
    if (value < best) best = value;
    return value;
  });
  const limit = best + Math.abs(best) * tolerance;
  return weightedPick(
    candidates.filter((_, index) => scores[index]! <= limit),
    random,
  );
}
