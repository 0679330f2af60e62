import { describe, expect, it } from 'vitest';
import type { RedisServerFacts } from '../store/shared/redis-output-requirements.ts';
import { OutputRequirements } from './output-requirements.ts';

const healthy: RedisServerFacts = {
  maxmemoryPolicy: 'noeviction',
  cluster: false,
  role: 'master',
};
const onRedis = (facts: Partial<RedisServerFacts> | Error) =>
  new OutputRequirements({
    storeKind: 'redis',
    degradedMode: 'fail_closed',
    readFacts: async () => {
      if (facts instanceof Error) throw facts;
      return { ...healthy, ...facts };
    },
  });
const settings = async (requirements: OutputRequirements) =>
  (await requirements.problems()).problems.map((problem) => problem.setting);

describe('OutputRequirements (spec output rule 10)', () => {
  it('is met by a standalone non-evicting primary with fail_closed', async () => {
    expect(await onRedis({}).problems()).toEqual({ problems: [], unverified: false });
    await expect(onRedis({}).assertMet()).resolves.toBeUndefined();
  });

  it('refuses cluster mode and replicas, naming redis_url', async () => {
    expect(await settings(onRedis({ cluster: true }))).toEqual(['general_settings.redis_url']);
    expect(await settings(onRedis({ role: 'slave' }))).toEqual(['general_settings.redis_url']);
  });

  it('refuses an evicting or unreadable maxmemory-policy', async () => {
    expect(await settings(onRedis({ maxmemoryPolicy: 'volatile-lru' }))).toEqual(['maxmemory-policy']);
    expect(await settings(onRedis({ maxmemoryPolicy: undefined }))).toEqual(['maxmemory-policy']);
  });

  it('refuses the memory store and fail_open, naming each setting', async () => {
    const memory = new OutputRequirements({ storeKind: 'memory', degradedMode: 'fail_open' });
    expect(await settings(memory)).toEqual([
      'general_settings.redis_url',
      'general_settings.redis_degraded_mode',
    ]);
    await expect(memory.assertMet()).rejects.toMatchObject({
      status: 409,
      param: 'general_settings.redis_url',
    });
  });

  it('answers 503 when Redis cannot be asked, rather than accepting unchecked', async () => {
    await expect(onRedis(new Error('down')).assertMet()).rejects.toMatchObject({ status: 503 });
  });
});
