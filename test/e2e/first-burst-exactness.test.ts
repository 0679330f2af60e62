/**
 * Exact from the first request (issue 31): two gateway instances (the real CLI) started together on one
 * PostgreSQL and one Redis, with the default redis_command_timeout_ms, each warmed with one request,
 * then a burst of 200 concurrent requests of a new key with rpm_limit 50 admits exactly 50; repeated
 * over several restarts of both. (With the old 50 ms default, a freshly started pair let 77–112
 * through: cold processes answered admissions later than 50 ms and decided them on their own counters.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayGroup } from '../support/gateway-group.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

const RESTARTS = 3;

describe.runIf(await realBackendsAvailable())('freshly started instances', () => {
  let redis: PrivateRedis;
  let group: GatewayGroup;

  beforeAll(async () => {
    // A Redis that never ran a gateway: its script cache is empty.
    redis = await PrivateRedis.start();
    group = await GatewayGroup.prepare({ redisUrl: redis.url });
  }, 120_000); // a redis-server, a schema and its migrations: slow on a loaded machine
  afterAll(async () => {
    await group?.close();
    await redis?.kill();
  });

  it('admit exactly rpm_limit of the first burst of a new key, after each of several restarts', async () => {
    const bursts: Array<Record<number, number>> = [];
    const locallyDecided: number[] = [];
    for (let restart = 0; restart < RESTARTS; restart++) {
      await group.start(2);
      const warm = await group.createKey({});
      expect(await group.burst(warm, 2)).toEqual({ 200: 2 });
      const key = await group.createKey({ rpm_limit: 50 });
      bursts.push(await group.burst(key, 200));
      locallyDecided.push(await group.metric('gateway_ratelimit_local_decisions_total'));
      await group.stopAll();
    }
    expect(bursts).toEqual(Array.from({ length: RESTARTS }, () => ({ 200: 50, 429: 150 })));
    expect(locallyDecided).toEqual(Array.from({ length: RESTARTS }, () => 0));
  }, 240_000);
});
