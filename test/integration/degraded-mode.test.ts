/**
 * Degraded mode (issue 4): a private redis-server is killed mid-test. fail_open keeps serving with this
 * process's counters (still enforcing the limits) and returns to Redis when it is back; fail_closed
 * answers 503 shared_store_unavailable; neither stalls a request behind Redis reconnecting. "Does not
 * stall" is event order, not a wall-clock bound a loaded machine stretches: the Redis command timeout is
 * set far above anything a decision takes (STALL_MS), so a request that waited for Redis shows as one
 * answered no sooner than that timeout.
 */
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

/** The gateway's Redis command timeout here: what a request stalled behind Redis would wait for. */
const STALL_MS = 10_000;

describe.runIf(redisServerInstalled).each(['fail_open', 'fail_closed'] as const)(
  'redis_degraded_mode: %s',
  (mode) => {
    let redis: PrivateRedis;
    let backend: Backend;
    let gateway: TestGateway;
    let key: string;
    let unlimitedKey: string;

    beforeAll(async () => {
      redis = await PrivateRedis.start();
      backend = sqliteBackend();
      gateway = await startTestGateway({
        backend,
        generalSettings: `  redis_url: ${JSON.stringify(redis.url)}\n  redis_degraded_mode: ${mode}\n  redis_command_timeout_ms: ${STALL_MS}\n`,
      });
      key = await gateway.createKey({ rpm_limit: 3 });
      unlimitedKey = await gateway.createKey({});
    });
    afterAll(async () => {
      await gateway?.close();
      await redis?.kill();
      await backend?.cleanup();
    });

    async function timedChat(bearer = key): Promise<{
      status: number;
      ms: number;
      body: any;
      retryAfter: string | null;
    }> {
      const started = performance.now();
      const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = await response.json();
      return {
        status: response.status,
        ms: performance.now() - started,
        body,
        retryAfter: response.headers.get('retry-after'),
      };
    }

    async function degradedGauge(): Promise<string | undefined> {
      const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
      return /^gateway_ratelimit_degraded (\d+)$/m.exec(text)?.[1];
    }

    it('uses Redis while it is up', async () => {
      expect((await timedChat()).status).toBe(200);
      expect(await degradedGauge()).toBe('0');
    });

    it(
      mode === 'fail_open'
        ? 'keeps serving on local counters while Redis is down, still enforcing limits'
        : 'answers 503 while Redis is down',
      async () => {
        await redis.kill();
        const results = [];
        for (let index = 0; index < 4; index++) results.push(await timedChat());
        // Each decided before the command timeout could fire: none waited for Redis.
        for (const result of results) expect(result.ms).toBeLessThan(STALL_MS);
        if (mode === 'fail_open') {
          expect(results.map((result) => result.status)).toEqual([200, 200, 200, 429]);
          expect(await degradedGauge()).toBe('1');
        } else {
          expect(results.map((result) => result.status)).toEqual([503, 503, 503, 503]);
          expect(results[0]!.body.error.code).toBe('shared_store_unavailable');
          expect(results[0]!.retryAfter).toBe('1');
        }
        // Issue 9: fail_closed refuses every request, also a key with no limit to count.
        const unlimited = await timedChat(unlimitedKey);
        expect(unlimited.status).toBe(mode === 'fail_open' ? 200 : 503);
        if (mode === 'fail_closed') expect(unlimited.body.error.code).toBe('shared_store_unavailable');
        const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
        expect(
          Number(/^gateway_ratelimit_store_errors_total (\d+)$/m.exec(metrics)?.[1]),
        ).toBeGreaterThanOrEqual(4);
      },
    );

    // Issue 17: the console's overview reads its spend figures from the database; only the refusal
    // counts live in Redis, so an outage blanks those (null) instead of failing the whole page.
    it('the console overview still answers while Redis is down, without refusal counts', async () => {
      const answer = await gateway.admin('GET', '/ui/api/console/overview?window=1h');
      expect(answer.status).toBe(200);
      expect(answer.body.rejections).toBeNull();
      expect(answer.body.totals.requests).toBeTypeOf('number');
      expect(answer.body.series).toHaveLength(60);
    });

    it('returns to Redis when it is back', async () => {
      await redis.restart();
      let result = await timedChat();
      for (let attempt = 0; attempt < 40 && result.status !== 200; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        result = await timedChat();
      }
      expect(result.status).toBe(200);
      expect(await degradedGauge()).toBe('0');
    });
  },
);
