/**
 * A Redis stall (issue 31): a private redis-server is paused with SIGSTOP for 5 s while requests of a
 * key with max_parallel_requests keep coming, then resumed. Under fail_open every request is served on
 * per-process counters, the degradation and the recovery are logged at warn, and as soon as the gateway
 * sees Redis answer again the key is served with all its slots: nothing the stalled Redis ran late
 * (admissions the gateway had given up on) holds a slot. Order of events, not wall-clock bounds.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { REQUIRE_REAL_BACKENDS } from '../support/test-env.ts';

const redisServerInstalled = await import('node:child_process').then(
  ({ spawnSync }) => spawnSync('redis-server', ['--version']).status === 0,
);
if (!redisServerInstalled && REQUIRE_REAL_BACKENDS)
  throw new Error('REQUIRE_REAL_BACKENDS=1 but redis-server is not installed');

// Requests that arrive while the outage is being detected wait together, then run together: room for them.
const SLOTS = 20;
const STALL_MS = 5_000;
const REQUESTS = 50;

describe.runIf(redisServerInstalled)('a Redis stall under fail_open', () => {
  let redis: PrivateRedis;
  let backend: Backend;
  let gateway: TestGateway;
  const logs: Array<{ level: number; msg: string }> = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: demo
    params: { provider: fake, model: demo, latency_ms: 200 }
`,
      generalSettings: `  redis_url: ${JSON.stringify(redis.url)}\n`,
      logger: pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line)) }),
    });
  });
  afterAll(async () => {
    redis?.resume();
    await gateway?.close();
    await redis?.kill();
    await backend?.cleanup();
  });

  async function chat(key: string): Promise<number> {
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await response.arrayBuffer();
    return response.status;
  }

  async function metric(name: string): Promise<number> {
    const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  }

  it('serves every request through a 5 s SIGSTOP, then serves the key again with every slot free as soon as Redis answers', async () => {
    const created = await gateway.admin('POST', '/ui/api/keys', { max_parallel_requests: SLOTS });
    const key = created.body.key as string;
    expect(await chat(key)).toBe(200);

    redis.pause();
    const pending: Array<Promise<number>> = [];
    // The load of the scenario: 50 requests spread over the stall, a few in flight at any time.
    for (let index = 0; index < REQUESTS; index++) {
      pending.push(chat(key));
      await new Promise((resolve) => setTimeout(resolve, STALL_MS / REQUESTS));
    }
    redis.resume();
    const statuses = await Promise.all(pending);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(await metric('gateway_ratelimit_local_decisions_total')).toBeGreaterThan(0);

    // Once the gateway has seen Redis answer again, every late script Redis ran has run (same connection).
    const probe = await gateway.createKey({ rpm_limit: 1_000 });
    for (let attempt = 0; (await metric('gateway_ratelimit_degraded')) !== 0; attempt++) {
      if (attempt > 200) throw new Error('the gateway never saw Redis answer again');
      await chat(probe);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const inspector = new Redis(redis.url);
    try {
      expect(await inspector.zcard(`${backend.prefix}rl:key:${created.body.key_id}:parallel`)).toBe(0);
    } finally {
      inspector.disconnect();
    }
    const again = await Promise.all(Array.from({ length: SLOTS }, () => chat(key)));
    expect(again).toEqual(Array.from({ length: SLOTS }, () => 200));

    const warnings = logs.filter((line) => line.level === 40).map((line) => line.msg);
    expect(warnings.findIndex((msg) => msg.startsWith('shared store down'))).toBeGreaterThanOrEqual(0);
    expect(warnings.findIndex((msg) => msg.startsWith('shared store answers again'))).toBeGreaterThan(
      warnings.findIndex((msg) => msg.startsWith('shared store down')),
    );
  });
});
