/**
 * Admission that cannot outlive its request (issue 31), at the Redis store: an admission carries the
 * time the store gives up on it, in Redis's clock, so one that reaches a stalled Redis after that
 * changes nothing when Redis resumes; one whose answer comes back too late is undone; and the
 * deadline is dated by Redis TIME, not by this process's clock. A private redis-server is stalled
 * (SIGSTOP) or slowed (a delaying proxy in front of it).
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/lib/clock.ts';
import type { AdmissionRequest } from '../../src/store/shared/rate-limit-counters.ts';
import { undoAdmission } from '../../src/store/shared/redis-admission.ts';
import { RedisSharedStore } from '../../src/store/shared/redis-shared-store.ts';
import { SharedStoreUnavailableError } from '../../src/store/shared/shared-store.ts';
import { DelayingTcpProxy } from '../support/delaying-tcp-proxy.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { REQUIRE_REAL_BACKENDS } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

const redisServerInstalled = await import('node:child_process').then(
  ({ spawnSync }) => spawnSync('redis-server', ['--version']).status === 0,
);
if (!redisServerInstalled && REQUIRE_REAL_BACKENDS)
  throw new Error('REQUIRE_REAL_BACKENDS=1 but redis-server is not installed');

/** Waits (polling) until `condition` holds; fails after `withinMs`. */
async function until(condition: () => Promise<boolean> | boolean, withinMs = 10_000): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.runIf(redisServerInstalled)('admission deadlines on Redis', () => {
  let redis: PrivateRedis;
  let inspector: Redis;
  const stores: RedisSharedStore[] = [];
  const proxies: DelayingTcpProxy[] = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    inspector = new Redis(redis.url);
  });
  afterEach(async () => {
    redis.resume();
    for (const store of stores.splice(0)) await store.close();
    for (const proxy of proxies.splice(0)) await proxy.close();
  });
  afterAll(async () => {
    inspector?.disconnect();
    await redis?.kill();
  });

  async function store(url: string, options: { timeoutMs?: number; processClock?: Clock } = {}) {
    const created = new RedisSharedStore({
      url,
      prefix: `${uniqueName('dl')}:`,
      commandTimeoutMs: options.timeoutMs ?? 300,
      ...(options.processClock ? { processClock: options.processClock } : {}),
    });
    stores.push(created);
    expect(await created.waitUntilReady(5_000)).toBe(true);
    return created;
  }

  /** Scripts Redis has run (EVAL, or EVALSHA once a connection has sent the script). */
  async function scriptsRun(): Promise<number> {
    const stats = await inspector.info('commandstats');
    const calls = (command: string) =>
      Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    return calls('eval') + calls('evalsha');
  }

  /** A rate counter of 1, a slot of 1 and a $1 budget reserved in full: a second admission finds no room. */
  function exclusive(member: string): AdmissionRequest {
    return {
      checks: [{ key: 'rpm', window: 'minute', limit: 1, amount: 1 }],
      slot: { key: 'slots', limit: 1, member, leaseMs: 60_000 },
      budgets: [{ key: 'budget', durationMs: 0, limit: 1_000_000 }],
      reservation: { member, amount: 1_000_000, leaseMs: 60_000 },
    };
  }

  it('an admission that reaches a stalled Redis after the store gave up on it holds nothing when Redis resumes', async () => {
    const target = await store(redis.url);
    const before = await scriptsRun();
    redis.pause();
    const abandoned = target.admit(exclusive('abandoned'));
    await expect(abandoned).rejects.toBeInstanceOf(SharedStoreUnavailableError);
    await expect(abandoned).rejects.toMatchObject({ failure: 'silent' });
    // The process that gave up goes away, so nobody is left to undo anything; Redis still runs the script.
    await target.close();
    redis.resume();
    await until(async () => (await scriptsRun()) > before);
    expect(await inspector.zcard(`${target.prefix}slots`)).toBe(0);
    expect(await inspector.exists(`${target.prefix}rpm`, `${target.prefix}budget:rz`)).toBe(0);
  });

  it('an admission whose answer comes back after the store gave up on it is undone', async () => {
    const proxy = await DelayingTcpProxy.start({ port: redis.port });
    proxies.push(proxy);
    const target = await store(proxy.redisUrl);
    proxy.settings = { requestLatencyMs: 0, replyLatencyMs: 800 };
    // Redis runs the script at once (before its deadline); only the answer is late.
    await expect(target.admit(exclusive('answered-late'))).rejects.toBeInstanceOf(
      SharedStoreUnavailableError,
    );
    proxy.settings = { requestLatencyMs: 0, replyLatencyMs: 0 };
    await until(() => target.lateAdmissions === 1);
    await until(async () => (await inspector.zcard(`${target.prefix}slots`)) === 0);
    expect(await target.admit(exclusive('next'))).toMatchObject({ admitted: true, counts: [1] });
  });

  it('dates deadlines by the Redis clock, so a process clock an hour off neither refuses nor lets late scripts through', async () => {
    for (const skewMs of [-3_600_000, 3_600_000]) {
      const target = await store(redis.url, { processClock: { now: () => Date.now() + skewMs } });
      expect(await target.admit(exclusive('on-time'))).toMatchObject({ admitted: true });
      await target.settle(undoAdmission(exclusive('on-time'), Date.now()));
      const before = await scriptsRun();
      redis.pause();
      await expect(target.admit(exclusive('late'))).rejects.toMatchObject({ failure: 'silent' });
      await target.close();
      redis.resume();
      await until(async () => (await scriptsRun()) > before);
      expect(await inspector.zcard(`${target.prefix}slots`)).toBe(0);
    }
  });
});
