import { describe, expect, it } from 'vitest';
import { refusal as rejection } from '../../test/support/gateway-refusal.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { ScriptedAdapter } from '../../test/support/scripted-adapter.ts';
import { seededRandom } from '../../test/support/seeded-random.ts';
import { testDeployment, testGroup } from '../../test/support/test-deployments.ts';
import type { RouterSettings } from '../config/config.ts';
import { GatewayError } from '../lib/gateway-error.ts';
import { DeploymentCapacity } from '../limits/deployment-capacity.ts';
import { createMetrics } from '../observability/metrics.ts';
import { classifyStatus } from '../providers/upstream-error.ts';
import { DeploymentHealth } from './deployment-health.ts';
import { FallbackEventLog } from './fallback-events.ts';
import { type ModelGroup, ModelRegistry } from './model-registry.ts';
import { Router } from './router.ts';
import { simpleShuffle } from './strategies/simple-shuffle.ts';

const baseSettings: RouterSettings = {
  routing_strategy: 'simple-shuffle',
  routing_strategy_args: { lowest_latency_buffer: 0, ttl: 3600 },
  num_retries: 2,
  retry_after: 0,
  allowed_fails: 3,
  cooldown_time: 5,
  timeout: 600,
  stream_timeout: 600,
  connect_timeout: 10,
  pool_timeout: 10,
  max_connections_per_deployment: 10,
  fallbacks: {},
  context_window_fallbacks: {},
  enable_pre_call_checks: false,
};

const request = { model: 'group', messages: [{ role: 'user' as const, content: 'hi' }] };

function harness(
  groups: ModelGroup[],
  settings: Partial<RouterSettings> = {},
  onSleep: () => void = () => {},
) {
  const clock = new ManualClock();
  const merged = { ...baseSettings, ...settings };
  const health = new DeploymentHealth(
    { allowedFails: merged.allowed_fails, cooldownMs: merged.cooldown_time * 1000, latencyTtlMs: 3_600_000 },
    clock,
  );
  const events = new FallbackEventLog();
  const metrics = createMetrics({ collectProcessMetrics: false });
  const waits: number[] = [];
  const router = new Router({
    registry: new ModelRegistry(groups, 0),
    settings: merged,
    strategy: simpleShuffle,
    health,
    events,
    metrics,
    clock,
    random: seededRandom(1),
    sleep: async (milliseconds) => {
      waits.push(milliseconds);
      onSleep();
    },
  });
  const capacity = new DeploymentCapacity(true).snapshot([], []);
  const context = {
    signal: new AbortController().signal,
    requestId: 'r1',
    promptTokenEstimate: 10,
    capacity,
    deadline: Date.now() + 60_000,
  };
  return { router, clock, health, events, metrics, waits, context };
}

function group(
  name: string,
  adapters: Record<string, ScriptedAdapter>,
  options: { maxInputTokens?: number } = {},
) {
  return testGroup(
    name,
    Object.entries(adapters).map(([id, adapter]) =>
      testDeployment(id, { adapter, modelName: name, ...options }),
    ),
  );
}

describe('the router', () => {
  it('retries a 500 on a different deployment of the group', async () => {
    const failing = new ScriptedAdapter([{ kind: 'status', status: 500 }], { kind: 'status', status: 500 });
    const healthy = new ScriptedAdapter();
    const only = group('group', { failing, healthy });
    const { router, context, events } = harness([only]);
    for (let index = 0; index < 10; index++) {
      const routed = await router.complete(only, request, context);
      expect(routed.deployment.id).toBe('healthy');
      if (routed.attempts === 2) {
        expect(events.recent(1)[0]).toMatchObject({
          from_deployment: 'failing',
          to_deployment: 'healthy',
          reason: 'status_500',
        });
      }
    }
  });

  it.each([400, 401, 403, 404, 422])('never retries a %i', async (status) => {
    const first = new ScriptedAdapter([], { kind: 'status', status });
    const second = new ScriptedAdapter([], { kind: 'status', status });
    const only = group('group', { first, second });
    const { router, context } = harness([only]);
    await rejection(router.complete(only, request, context));
    expect(first.calls.length + second.calls.length).toBe(1);
  });

  it('makes at most num_retries + 1 attempts', async () => {
    const adapter = new ScriptedAdapter([], { kind: 'timeout' });
    const only = group('group', { a: adapter });
    const { router, context } = harness([only], { num_retries: 4, allowed_fails: 100 });
    const error = await rejection(router.complete(only, request, context));
    expect(adapter.calls).toHaveLength(5);
    expect(error.status).toBe(504);
  });

  it('sends the upstream its own model name', async () => {
    const adapter = new ScriptedAdapter();
    const only = group('group', { a: adapter });
    const { router, context } = harness([only]);
    await router.complete(only, request, context);
    expect(adapter.calls[0]!.model).toBe('a-upstream');
  });

  it('cools a deployment down after allowed_fails failures in a minute, and brings it back after cooldown_time', async () => {
    const flaky = new ScriptedAdapter([], { kind: 'status', status: 503 });
    const steady = new ScriptedAdapter();
    const only = group('group', { flaky, steady });
    const { router, context, clock, health, metrics } = harness([only], {
      num_retries: 0,
      allowed_fails: 2,
      cooldown_time: 30,
    });
    while (flaky.calls.length < 2) await router.complete(only, request, context).catch(() => undefined);
    expect(health.isCoolingDown('flaky')).toBe(true);
    const before = flaky.calls.length;
    for (let index = 0; index < 20; index++) await router.complete(only, request, context);
    expect(flaky.calls.length).toBe(before);
    clock.advance(30_001);
    expect(health.isCoolingDown('flaky')).toBe(false);
    const counted = await metrics.registry.getSingleMetricAsString('gateway_deployment_cooldowns_total');
    expect(counted).toContain('deployment="flaky"} 1');
  });

  it('cools a deployment for exactly the Retry-After of its 429', async () => {
    const limited = new ScriptedAdapter([{ kind: 'status', status: 429, retryAfterSeconds: 20 }]);
    const only = group('group', { limited });
    const { router, context, health, clock } = harness([only], { num_retries: 0 });
    const error = await rejection(router.complete(only, request, context));
    expect(error).toMatchObject({ status: 429, code: 'upstream_rate_limited', retryAfter: 20 });
    expect(health.cooldownRemainingMs('limited')).toBe(20_000);
    clock.advance(20_000);
    expect(health.isCoolingDown('limited')).toBe(false);
  });

  it('answers 503 with the shortest remaining cooldown when every deployment is cooling down', async () => {
    const a = new ScriptedAdapter();
    const b = new ScriptedAdapter();
    const only = group('group', { a, b });
    const { router, context, health, clock } = harness([only]);
    const rateLimited = (seconds: number) => classifyStatus(429, { 'retry-after': String(seconds) });
    health.failed('a', rateLimited(40));
    health.failed('b', rateLimited(12));
    clock.advance(2_000);
    const error = await rejection(router.complete(only, request, context));
    expect(error).toMatchObject({ status: 503, code: 'no_healthy_deployment', retryAfter: 10 });
    expect(a.calls.length + b.calls.length).toBe(0);
  });

  it('waits for the upstream’s Retry-After before retrying the same deployment', async () => {
    const adapter = new ScriptedAdapter([{ kind: 'status', status: 503, retryAfterSeconds: 2 }]);
    const only = group('group', { a: adapter });
    const { router, context, waits } = harness([only]);
    const routed = await router.complete(only, request, context);
    expect(routed.attempts).toBe(2);
    expect(waits).toEqual([2_000]);
  });

  it('waits retry_after between attempts', async () => {
    const adapter = new ScriptedAdapter([{ kind: 'status', status: 500 }]);
    const only = group('group', { a: adapter });
    const { router, context, waits } = harness([only], { retry_after: 0.25 });
    await router.complete(only, request, context);
    expect(waits).toEqual([250]);
  });

  it('never retries or cools down a deployment for a failure of our own code (issue 9)', async () => {
    const buggy = new ScriptedAdapter([], { kind: 'local-bug' });
    const other = new ScriptedAdapter();
    const only = group('group', { buggy, other });
    const { router, context, health, metrics } = harness([only], { allowed_fails: 0, num_retries: 3 });
    for (let index = 0; index < 5; index++) {
      const error = await rejection(router.complete(only, request, context)).catch(() => undefined);
      if (error) expect(error).toMatchObject({ status: 500, code: 'internal_error' });
    }
    expect(buggy.calls.length + other.calls.length).toBe(5); // one attempt per request, never a retry
    expect(health.cooldownRemainingMs('buggy')).toBe(0);
    expect(await metrics.registry.getSingleMetricAsString('gateway_upstream_attempts_total')).toContain(
      'outcome="local_error"',
    );
  });

  it('falls back to the next model group once the group is exhausted, and records the event', async () => {
    const primary = group('primary', { p1: new ScriptedAdapter([], { kind: 'status', status: 500 }) });
    const backupAdapter = new ScriptedAdapter();
    const backup = group('backup', { b1: backupAdapter });
    const { router, context, events } = harness([primary, backup], {
      num_retries: 1,
      fallbacks: { primary: ['backup'] },
    });
    const routed = await router.complete(primary, request, context);
    expect(routed).toMatchObject({ modelGroup: 'backup', attempts: 3 });
    expect(backupAdapter.calls[0]!.model).toBe('b1-upstream');
    expect(events.recent(1)[0]).toMatchObject({
      model: 'primary',
      to_model: 'backup',
      from_deployment: 'p1',
      to_deployment: 'b1',
    });
  });

  it('skips fallback groups the caller may not use (issue 9: the key allow-list)', async () => {
    const primary = group('primary', { p1: new ScriptedAdapter([], { kind: 'status', status: 500 }) });
    const forbiddenAdapter = new ScriptedAdapter();
    const forbidden = group('forbidden', { f1: forbiddenAdapter });
    const { router, context } = harness([primary, forbidden], {
      num_retries: 0,
      fallbacks: { primary: ['forbidden'] },
    });
    const error = await rejection(
      router.complete(primary, request, { ...context, mayUseGroup: (name) => name !== 'forbidden' }),
    );
    expect(error.status).toBe(502); // the primary's upstream failure, not an answer from 'forbidden'
    expect(forbiddenAdapter.calls).toHaveLength(0);
  });

  it('enters a fallback group only when its per-model limits admit it, skipping it otherwise', async () => {
    const primary = group('primary', { p1: new ScriptedAdapter([], { kind: 'status', status: 500 }) });
    const fullAdapter = new ScriptedAdapter();
    const openAdapter = new ScriptedAdapter();
    const full = group('full', { x1: fullAdapter });
    const open = group('open', { o1: openAdapter });
    const { router, context } = harness([primary, full, open], {
      num_retries: 0,
      fallbacks: { primary: ['full', 'open'] },
    });
    const entered: string[] = [];
    const routed = await router.complete(primary, request, {
      ...context,
      enterGroup: async (name) => {
        entered.push(name);
        return name !== 'full';
      },
    });
    expect(routed.modelGroup).toBe('open');
    expect(entered).toEqual(['full', 'open']);
    expect(fullAdapter.calls).toHaveLength(0);
  });

  it('never offers a context-window fallback the caller may not use', async () => {
    const small = group('small', { s1: new ScriptedAdapter() }, { maxInputTokens: 100 });
    const large = group('large', { l1: new ScriptedAdapter() }, { maxInputTokens: 100_000 });
    const { router, context } = harness([small, large], { context_window_fallbacks: { small: ['large'] } });
    const error = await rejection(
      router.complete(small, request, { ...context, promptTokenEstimate: 5_000, mayUseGroup: () => false }),
    );
    expect(error).toMatchObject({ status: 400, code: 'context_length_exceeded' });
  });

  it('chooses a context-window fallback before the first attempt, recording from_deployment null', async () => {
    const smallAdapter = new ScriptedAdapter();
    const small = group('small', { s1: smallAdapter }, { maxInputTokens: 100 });
    const large = group('large', { l1: new ScriptedAdapter() }, { maxInputTokens: 100_000 });
    const { router, context, events } = harness([small, large], {
      context_window_fallbacks: { small: ['large'] },
    });
    const routed = await router.complete(small, request, { ...context, promptTokenEstimate: 5_000 });
    expect(routed.modelGroup).toBe('large');
    expect(smallAdapter.calls).toHaveLength(0);
    expect(events.recent(1)[0]).toMatchObject({
      from_deployment: null,
      // Issue 9: the event names the deployment that served.
      to_deployment: 'l1',
      reason: 'context_window_exceeded',
      model: 'small',
      to_model: 'large',
    });
  });

  it('answers 400 context_length_exceeded when nothing can take the prompt', async () => {
    const small = group('small', { s1: new ScriptedAdapter() }, { maxInputTokens: 100 });
    const { router, context } = harness([small]);
    const error = await rejection(
      router.complete(small, request, { ...context, promptTokenEstimate: 5_000 }),
    );
    expect(error).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'messages' });
  });

  it('retries a stream that fails before its first chunk', async () => {
    const broken = new ScriptedAdapter([{ kind: 'status', status: 502 }]);
    const only = group('group', { broken });
    const { router, context } = harness([only]);
    const routed = await router.stream(only, request, context);
    expect(routed.attempts).toBe(2);
    expect(routed.value.first.chunk.choices[0]!.delta.content).toBe('a');
  });

  it('does not retry a stream once its first chunk is in hand; the failure surfaces from the stream', async () => {
    const adapter = new ScriptedAdapter([{ kind: 'break', after: 1 }]);
    const only = group('group', { a: adapter });
    const { router, context, health } = harness([only]);
    const routed = await router.stream(only, request, context);
    expect(health.state('a').inFlight).toBe(1);
    await expect(routed.value.rest.next()).rejects.toThrow('broken');
    expect(adapter.calls).toHaveLength(1);
    expect(health.state('a').inFlight).toBe(0);
    expect(health.state('a').failures).toBe(1);
  });

  it('stops retrying once the caller has gone', async () => {
    const adapter = new ScriptedAdapter([], { kind: 'status', status: 500 });
    const only = group('group', { a: adapter });
    const { router, context } = harness([only]);
    const controller = new AbortController();
    controller.abort();
    await rejection(router.complete(only, request, { ...context, signal: controller.signal }));
    expect(adapter.calls).toHaveLength(1);
  });
});

describe('the router and requests a deployment refuses as the caller mistake', () => {
  const callerMistake = () =>
    new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      message: 'no',
      param: 'voice',
    });

  it('moves on to another deployment without spending a retry or cooling the refusing one', async () => {
    const only = group('group', { picky: new ScriptedAdapter(), open: new ScriptedAdapter() });
    const { router, context, health } = harness([only], { num_retries: 0, allowed_fails: 0 });
    for (let index = 0; index < 6; index++) {
      const routed = await router.invoke(only, context, async (deployment) => {
        if (deployment.id === 'picky') throw callerMistake();
        return deployment.id;
      });
      expect(routed.value).toBe('open');
    }
    expect(health.cooldownRemainingMs('picky')).toBe(0);
  });

  it('answers the caller mistake when every deployment refuses it, calling each once', async () => {
    const only = group('group', { a: new ScriptedAdapter(), b: new ScriptedAdapter() });
    const { router, context, health } = harness([only], { num_retries: 3, allowed_fails: 0 });
    const calls: string[] = [];
    const error = await rejection(
      router.invoke(only, context, async (deployment) => {
        calls.push(deployment.id);
        throw callerMistake();
      }),
    );
    expect(error.status).toBe(400);
    expect(error.param).toBe('voice');
    expect(calls.sort()).toEqual(['a', 'b']);
    expect(health.cooldownRemainingMs('a') + health.cooldownRemainingMs('b')).toBe(0);
  });

  it('makes no further attempt once the caller left during the pause between attempts', async () => {
    const only = group('group', {
      a: new ScriptedAdapter([], { kind: 'status', status: 500 }),
      b: new ScriptedAdapter([], { kind: 'status', status: 500 }),
    });
    const caller = new AbortController();
    const { router, context, waits } = harness(
      [only],
      { num_retries: 2, retry_after: 1, allowed_fails: 100 },
      () => caller.abort(),
    );
    const error = await rejection(router.complete(only, request, { ...context, signal: caller.signal }));
    expect(waits).toHaveLength(1);
    expect(error.status).toBe(499);
    const calls = only.deployments.map((deployment) => (deployment.adapter as ScriptedAdapter).calls.length);
    expect(calls.reduce((sum, count) => sum + count, 0)).toBe(1);
  });
});
