import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/support/manual-clock.ts';
import { seededRandom } from '../../../test/support/seeded-random.ts';
import { testDeployment } from '../../../test/support/test-deployments.ts';
import { DeploymentHealth } from '../deployment-health.ts';
import type { Deployment } from '../model-registry.ts';
import type { RoutingStrategy, StrategyContext } from '../routing-strategy.ts';
import { latencyBased } from './latency-based.ts';
import { leastBusy } from './least-busy.ts';
import { rateLimitAware } from './rate-limit-aware.ts';
import { simpleShuffle } from './simple-shuffle.ts';
import { usageBased } from './usage-based.ts';

/** Minute usage per deployment that a test sets by hand. */
function usageSignal() {
  const usage = new Map<string, { requests: number; tokens: number }>();
  const get = (id: string) => usage.get(id) ?? { requests: 0, tokens: 0 };
  return {
    minuteUsage: get,
    attemptStarted: (id: string) => usage.set(id, { ...get(id), requests: get(id).requests + 1 }),
    tokensUsed: (id: string, tokens: number) =>
      usage.set(id, { ...get(id), tokens: get(id).tokens + tokens }),
  };
}

function setup(streaming = false) {
  const clock = new ManualClock();
  const health = new DeploymentHealth({ allowedFails: 3, cooldownMs: 5_000, latencyTtlMs: 60_000 }, clock);
  const capacity = usageSignal();
  const context: StrategyContext = { health, capacity, random: seededRandom(7), streaming };
  return { clock, health, capacity, context };
}

function shares(
  strategy: RoutingStrategy,
  deployments: Deployment[],
  context: StrategyContext,
  picks = 20_000,
) {
  const counts = new Map<string, number>();
  for (let index = 0; index < picks; index++) {
    const id = strategy.pick(deployments, context).id;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return Object.fromEntries(
    deployments.map((deployment) => [deployment.id, (counts.get(deployment.id) ?? 0) / picks]),
  );
}

describe('simple-shuffle', () => {
  it('sends traffic in proportion to the weights (within 2 points)', () => {
    const { context } = setup();
    const result = shares(
      simpleShuffle,
      [
        testDeployment('a', { weight: 1 }),
        testDeployment('b', { weight: 3 }),
        testDeployment('c', { weight: 6 }),
      ],
      context,
    );
    expect(result.a).toBeCloseTo(0.1, 1);
    expect(Math.abs(result.a! - 0.1)).toBeLessThan(0.02);
    expect(Math.abs(result.b! - 0.3)).toBeLessThan(0.02);
    expect(Math.abs(result.c! - 0.6)).toBeLessThan(0.02);
  });

  it('splits evenly without weights', () => {
    const { context } = setup();
    const result = shares(simpleShuffle, [testDeployment('a'), testDeployment('b')], context);
    expect(Math.abs(result.a! - 0.5)).toBeLessThan(0.02);
  });
});

describe('least-busy', () => {
  it('always picks the deployment with the fewest requests in flight', () => {
    const { context, health } = setup();
    const [a, b, c] = [testDeployment('a'), testDeployment('b'), testDeployment('c')];
    for (let index = 0; index < 3; index++) health.started('a');
    health.started('c');
    expect(shares(leastBusy, [a, b, c], context, 1_000)).toEqual({ a: 0, b: 1, c: 0 });
  });

  it('shares traffic among equally idle deployments', () => {
    const { context } = setup();
    const result = shares(leastBusy, [testDeployment('a'), testDeployment('b')], context);
    expect(Math.abs(result.a! - 0.5)).toBeLessThan(0.02);
  });
});

describe('latency-based-routing', () => {
  it('shifts traffic away from a slow deployment', () => {
    const { context, health } = setup();
    health.succeeded('fast', { latencyMs: 80 });
    health.succeeded('slow', { latencyMs: 900 });
    expect(shares(latencyBased(0), [testDeployment('fast'), testDeployment('slow')], context, 1_000)).toEqual(
      { fast: 1, slow: 0 },
    );
  });

  it('tries an unmeasured deployment first so it gets measured', () => {
    const { context, health } = setup();
    health.succeeded('measured', { latencyMs: 50 });
    expect(latencyBased(0).pick([testDeployment('measured'), testDeployment('new')], context).id).toBe('new');
  });

  it('treats deployments within the buffer of the fastest as equal', () => {
    const { context, health } = setup();
    health.succeeded('a', { latencyMs: 100 });
    health.succeeded('b', { latencyMs: 140 });
    const result = shares(latencyBased(0.5), [testDeployment('a'), testDeployment('b')], context);
    expect(Math.abs(result.a! - 0.5)).toBeLessThan(0.02);
  });

  it('uses time to first token for streams', () => {
    const { health } = setup();
    const { context } = { context: { ...setup(true).context, health } };
    health.succeeded('a', { latencyMs: 50, timeToFirstTokenMs: 900 });
    health.succeeded('b', { latencyMs: 500, timeToFirstTokenMs: 30 });
    expect(latencyBased(0).pick([testDeployment('a'), testDeployment('b')], context).id).toBe('b');
  });

  it('forgets samples older than the ttl', () => {
    const { context, health, clock } = setup();
    health.succeeded('a', { latencyMs: 900 });
    clock.advance(61_000);
    expect(health.freshLatency('a', false)).toBeUndefined();
    health.succeeded('b', { latencyMs: 100 });
    expect(latencyBased(0).pick([testDeployment('a'), testDeployment('b')], context).id).toBe('a');
  });
});

describe('usage-based-routing', () => {
  it('picks the deployment that used the fewest tokens this minute', () => {
    const { context, capacity } = setup();
    capacity.tokensUsed('a', 5_000);
    capacity.tokensUsed('b', 200);
    capacity.tokensUsed('c', 900);
    expect(
      shares(usageBased, [testDeployment('a'), testDeployment('b'), testDeployment('c')], context, 500),
    ).toEqual({ a: 0, b: 1, c: 0 });
  });
});

describe('RateLimitAwareStrategy', () => {
  it('deprioritises a deployment above 90% of its rpm limit before it reaches 100%', () => {
    const { context, capacity } = setup();
    const busy = testDeployment('busy', { rpmLimit: 100 });
    const roomy = testDeployment('roomy', { rpmLimit: 100 });
    for (let index = 0; index < 91; index++) capacity.attemptStarted('busy');
    for (let index = 0; index < 50; index++) capacity.attemptStarted('roomy');
    expect(shares(rateLimitAware, [busy, roomy], context, 500)).toEqual({ busy: 0, roomy: 1 });
  });

  it('counts token utilisation against tpm_limit too', () => {
    const { context, capacity } = setup();
    capacity.tokensUsed('busy', 9_500);
    expect(
      rateLimitAware.pick(
        [testDeployment('busy', { tpmLimit: 10_000 }), testDeployment('free', { tpmLimit: 10_000 })],
        context,
      ).id,
    ).toBe('free');
  });

  it('shuffles by weight among deployments at or below 90%', () => {
    const { context, capacity } = setup();
    for (let index = 0; index < 90; index++) capacity.attemptStarted('a');
    const result = shares(
      rateLimitAware,
      [testDeployment('a', { rpmLimit: 100 }), testDeployment('b', { rpmLimit: 100 })],
      context,
    );
    expect(Math.abs(result.a! - 0.5)).toBeLessThan(0.02);
  });

  it('picks the least utilised when every deployment is above 90%', () => {
    const { context, capacity } = setup();
    for (let index = 0; index < 99; index++) capacity.attemptStarted('a');
    for (let index = 0; index < 95; index++) capacity.attemptStarted('b');
    expect(
      rateLimitAware.pick(
        [testDeployment('a', { rpmLimit: 100 }), testDeployment('b', { rpmLimit: 100 })],
        context,
      ).id,
    ).toBe('b');
  });
});
