/**
 * Redis stalled, not killed (issue 31): two gateway processes on one private redis-server under a
 * steady load of a key with max_parallel_requests and a request counter.
 *
 * - SIGSTOP for 5 s, then SIGCONT, under fail_open and fail_closed: fail_open serves every request (on
 *   per-process counters once Redis is declared down), fail_closed answers 503 shared_store_unavailable
 *   meanwhile; after SIGCONT the gateways count in Redis again within 2 s, every slot is free (none held
 *   by the admissions Redis ran late) and the Redis counter holds exactly the requests Redis admitted.
 * - A delaying proxy in front of Redis (latency each way and a bandwidth cap): slow is not down, so
 *   nothing is decided locally, a burst is exact and the slots hold.
 *
 * Each scenario records requests served, refused and failed, slots and counters afterwards.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { DelayingTcpProxy } from '../support/delaying-tcp-proxy.ts';
import { GatewayGroup } from '../support/gateway-group.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { realBackendsAvailable } from '../support/test-env.ts';
import { secondsBetween } from './support/fault-harness.ts';
import { recordScenario } from './support/fault-report.ts';
import { isServed, SteadyLoad } from './support/steady-load.ts';

const STALL_MS = 5_000;
const SLOTS = 40;

describe.runIf(await realBackendsAvailable())('Redis stalled', () => {
  let redis: PrivateRedis | undefined;
  let group: GatewayGroup | undefined;
  let proxy: DelayingTcpProxy | undefined;
  afterEach(async () => {
    redis?.resume();
    await group?.close();
    await proxy?.close();
    await redis?.kill();
    group = undefined;
    proxy = undefined;
    redis = undefined;
  });

  /** Polls until `condition` holds; when it held (performance.now()), or undefined after `withinMs`. */
  async function when(condition: () => Promise<boolean>, withinMs: number): Promise<number | undefined> {
    const deadline = performance.now() + withinMs;
    while (performance.now() < deadline) {
      if (await condition().catch(() => false)) return performance.now();
      await delay(50);
    }
    return undefined;
  }

  /** The key's request counter of this minute in Redis (`rl:key:<id>:rpm`, a hash {n, e}). */
  async function rpmCounter(inspector: Redis, keyId: string): Promise<number> {
    return Number((await inspector.hget(`${group!.prefix}rl:key:${keyId}:rpm`, 'n')) ?? 0);
  }

  for (const mode of ['fail_open', 'fail_closed'] as const) {
    it(`${mode}: a ${STALL_MS / 1000} s SIGSTOP of Redis holds no slot or count once it resumes`, async () => {
      redis = await PrivateRedis.start();
      group = await GatewayGroup.prepare({
        redisUrl: redis.url,
        generalSettings: `  redis_degraded_mode: ${mode}\n`,
      });
      await group.start(2);
      const { key, keyId } = await group.createKeyWithId({
        max_parallel_requests: SLOTS,
        rpm_limit: 100_000,
      });
      const load = SteadyLoad.start({
        baseUrls: group.baseUrls,
        apiKey: key,
        model: 'demo',
        ratePerSecond: 10,
        streamShare: 0.25,
        timeoutMs: 20_000,
      });
      await delay(1_000);
      const pausedAt = performance.now();
      redis.pause();
      await delay(STALL_MS);
      redis.resume();
      const resumedAt = performance.now();
      const servedAgainAt = await load.waitForServed(resumedAt, 1, 20_000);
      // Counting in Redis again: under fail_open every gateway's degraded gauge back to 0; under
      // fail_closed (nothing is counted elsewhere) the first request served after SIGCONT.
      const countingAgainAt =
        mode === 'fail_open'
          ? await when(async () => (await group!.metric('gateway_ratelimit_degraded')) === 0, 20_000)
          : servedAgainAt;
      await delay(2_000);
      const summary = await load.stop();
      const during = load.between(pausedAt + 1_000).filter((record) => record.endedAt < resumedAt);
      const local = await group.metric('gateway_ratelimit_local_decisions_total');
      const inspector = new Redis(redis.url);
      let counted = 0;
      // Undoes of answers that came back late may still be on their way: the counter settles.
      await when(async () => {
        counted = await rpmCounter(inspector, keyId);
        return counted === summary.served - local;
      }, 5_000);
      const slots = await group.checkSlots(key, SLOTS);
      inspector.disconnect();
      const slowest = (summary.slowestMs / 1000).toFixed(1);
      recordScenario({
        group: 'Redis',
        scenario: `redis-server stalled (SIGSTOP) for ${STALL_MS / 1000} s under load, then resumed`,
        mode,
        requests: summary.requests,
        served: summary.served,
        errorsByStatus: summary.errorsByStatus,
        recoverySeconds:
          summary.served === summary.requests ? null : secondsBetween(resumedAt, servedAgainAt),
        readinessSeconds: null,
        spend: 'not measured',
        notes:
          `counting in Redis again ${secondsBetween(resumedAt, countingAgainAt)} s after SIGCONT; ` +
          `${slots.served}/${SLOTS} slots usable afterwards; Redis counted ${counted} requests, ` +
          `${local} were decided on per-process counters; slowest request ${slowest} s`,
      });

      expect(
        group.running.every((gateway) => gateway.child.exitCode === null),
        'no gateway crashed',
      ).toBe(true);
      expect(
        secondsBetween(resumedAt, countingAgainAt),
        'counting in Redis again within 2 s',
      ).toBeLessThanOrEqual(2);
      expect(slots, 'no slot held by what Redis ran late').toEqual({ served: SLOTS, refused: 1 });
      expect(counted, 'Redis counted exactly what it admitted').toBe(summary.served - local);
      if (mode === 'fail_open') {
        expect(summary.errorsByStatus, 'fail_open serves through the stall').toEqual({});
        expect(local).toBeGreaterThan(0);
      } else {
        expect(during.length).toBeGreaterThan(3);
        expect(
          new Set(during.filter((r) => !isServed(r.outcome)).map((r) => `${r.outcome} ${r.code}`)),
        ).toEqual(new Set(['503 shared_store_unavailable']));
        expect(local).toBe(0);
        expect(secondsBetween(resumedAt, servedAgainAt), 'served again within 2 s').toBeLessThanOrEqual(2);
      }
    });
  }

  it('a slowed Redis (a delaying proxy) is not down: nothing decided locally, a burst exact, slots held', async () => {
    redis = await PrivateRedis.start();
    proxy = await DelayingTcpProxy.start(
      { port: redis.port },
      { requestLatencyMs: 100, replyLatencyMs: 100, bytesPerSecond: 256 * 1024 },
    );
    group = await GatewayGroup.prepare({ redisUrl: proxy.redisUrl });
    await group.start(2);
    const { key } = await group.createKeyWithId({ max_parallel_requests: SLOTS });
    const load = SteadyLoad.start({
      baseUrls: group.baseUrls,
      apiKey: key,
      model: 'demo',
      ratePerSecond: 20,
      streamShare: 0.25,
      timeoutMs: 20_000,
    });
    await delay(8_000);
    const summary = await load.stop();
    const burstKey = await group.createKey({ rpm_limit: 50 });
    const burst = await group.burst(burstKey, 200);
    const slots = await group.checkSlots(key, SLOTS);
    const local = await group.metric('gateway_ratelimit_local_decisions_total');
    const served = load.records.filter((record) => isServed(record.outcome));
    const p50 = served.map((record) => record.endedAt - record.startedAt).sort((a, b) => a - b)[
      Math.floor(served.length / 2)
    ];
    recordScenario({
      group: 'Redis',
      scenario: 'Redis behind a proxy adding 100 ms each way and a 256 KiB/s cap, under load',
      mode: 'fail_open',
      requests: summary.requests,
      served: summary.served,
      errorsByStatus: summary.errorsByStatus,
      recoverySeconds: null,
      readinessSeconds: null,
      spend: 'not measured',
      notes:
        `request p50 ${Math.round(p50 ?? 0)} ms; burst of 200 through rpm_limit 50 admitted ${burst[200] ?? 0}; ` +
        `${slots.served}/${SLOTS} slots usable; ${local} admissions decided locally`,
    });

    expect(summary.errorsByStatus).toEqual({});
    expect(local, 'slow is not down').toBe(0);
    expect(burst).toEqual({ 200: 50, 429: 150 });
    expect(slots).toEqual({ served: SLOTS, refused: 1 });
  });
});
