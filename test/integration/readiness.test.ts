/**
 * Readiness against real stores (issue 2): with PostgreSQL and Redis it reports database,
 * foreground_database and redis as ready; a saturated pool fails foreground_database while the server
 * (database, on a connection of its own) answers; when Redis dies, a fail_closed gateway turns 503 within two
 * seconds while a fail_open one (which still serves, on per-process counters) reports `redis: false`
 * and stays 200, so a load balancer keeps it; both recover when Redis returns. The Redis here is a
 * private redis-server that the test kills by PID. The two seconds are the readiness cache (one second
 * on the gateway's clock, a ManualClock here) and the probe's own one-second deadline (a timer in the
 * code): the test moves the clock by the cache and waits for the 503 as an event, so a loaded machine
 * slows it down without failing it.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, postgresBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

async function readiness(baseUrl: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}/health/readiness`);
  return { status: response.status, body: await response.json() };
}

async function until(condition: () => Promise<boolean>, withinMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < withinMs) {
    if (await condition()) return performance.now() - started;
    await delay(50);
  }
  throw new Error(`condition not met within ${withinMs} ms`);
}

describe.runIf(await realBackendsAvailable())('readiness with PostgreSQL and a Redis that dies', () => {
  let redis: PrivateRedis;
  let backend: Backend;
  let gateway: TestGateway;
  let failOpen: TestGateway;
  /** The fail_closed gateway's clock: its readiness cache lapses only when the test moves it. */
  const clock = new ManualClock();
  const READINESS_CACHE_MS = 1_000;
  /** A failure guard for an event that never comes, not a bound on how fast it comes. */
  const GUARD_MS = 15_000;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    const base = postgresBackend();
    backend = {
      ...base,
      redisUrl: redis.url,
      generalSettingsYaml: `  database_url: ${JSON.stringify(base.databaseUrl)}\n  redis_url: ${JSON.stringify(redis.url)}\n`,
    };
    gateway = await startTestGateway({
      backend: {
        ...backend,
        generalSettingsYaml: `${backend.generalSettingsYaml}  redis_degraded_mode: fail_closed\n`,
      },
      clock,
    });
    failOpen = await startTestGateway({
      backend: {
        ...backend,
        generalSettingsYaml: `${backend.generalSettingsYaml}  redis_degraded_mode: fail_open\n`,
      },
    });
  });
  afterAll(async () => {
    await failOpen?.close();
    await gateway?.close();
    await redis?.kill();
    await backend?.cleanup();
  });

  it('reports database, foreground_database and redis as ready', async () => {
    const { status, body } = await readiness(gateway.baseUrl);
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    expect(body.checks).toEqual({ database: true, foreground_database: true, redis: true });
    expect(body.details.redis.state).toBe('ready');
    const health = await fetch(`${gateway.baseUrl}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { alive: boolean }).alive).toBe(true);
  });

  it('fail_closed: turns 503 once Redis is gone and the readiness cache lapsed; fail_open: says redis false and stays 200', async () => {
    await redis.kill();
    // No more than the readiness cache on the gateway's clock: a longer cache would keep answering 200.
    clock.advance(READINESS_CACHE_MS);
    await until(async () => (await readiness(gateway.baseUrl)).status === 503, GUARD_MS);
    const degraded = await readiness(gateway.baseUrl);
    expect(degraded.body.checks.redis).toBe(false);
    expect(degraded.body.checks.database).toBe(true);
    expect((await fetch(`${gateway.baseUrl}/health/liveliness`)).status).toBe(200);

    await until(async () => (await readiness(failOpen.baseUrl)).body.checks.redis === false, GUARD_MS);
    const open = await readiness(failOpen.baseUrl);
    expect(open.status).toBe(200);
    expect(open.body.status).toBe('ok');
    expect(open.body.details.redis.state).not.toBe('ready');

    await redis.restart();
    // Redis reconnects in its own time: every poll lapses the cache, so each reads a fresh report.
    await until(async () => {
      clock.advance(READINESS_CACHE_MS);
      return (await readiness(gateway.baseUrl)).status === 200;
    }, GUARD_MS);
    await until(async () => (await readiness(failOpen.baseUrl)).body.checks.redis === true, GUARD_MS);
  });

  it('tells a saturated pool from a database that does not answer: database ready, foreground_database not (issue 25)', async () => {
    // One pooled connection, held: the pool has nothing to lend, while the server answers fine.
    const saturated = await startTestGateway({
      backend: { ...backend, generalSettingsYaml: `${backend.generalSettingsYaml}  database_pool_size: 1\n` },
    });
    let release = () => {};
    const held = saturated.gateway.database.db
      .connection()
      .execute(() => new Promise<void>((resolve) => (release = resolve)));
    try {
      const { status, body } = await readiness(saturated.baseUrl);
      expect(status).toBe(503);
      expect(body.checks).toMatchObject({ database: true, foreground_database: false });
      expect(body.details.foreground_database.state).toBe('timeout');
    } finally {
      release();
      await held;
      await saturated.close();
    }
  });

  it('reports 503 while draining', async () => {
    gateway.gateway.readiness.startDraining();
    const { status, body } = await readiness(gateway.baseUrl);
    expect(status).toBe(503);
    expect(body.checks.draining).toBe(false);
  });
});
