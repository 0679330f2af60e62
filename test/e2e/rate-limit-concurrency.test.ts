/**
 * Exact limits across processes (issue 4): gateways started with the real CLI share one PostgreSQL
 * schema and one Redis key prefix; 200 concurrent requests against rpm_limit 50 admit exactly 50, both
 * with --workers 2 and with two independent instances, and max_parallel_requests holds with slow
 * answers. Request logs show more than one process served.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema } from '../support/backends.ts';
import { type SpawnedGateway, spawnGateway } from '../support/spawn-gateway.ts';
import { realBackendsAvailable, TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

const MASTER = 'sk-master-concurrency-test';

describe.runIf(await realBackendsAvailable())('limits across processes', () => {
  const schema = uniqueName('t');
  const running: SpawnedGateway[] = [];
  let config: string;

  beforeAll(async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA "${schema}"`);
    await client.end();
    const databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    config = join(mkdtempSync(join(tmpdir(), 'switchboard-concurrency-')), 'switchboard.yaml');
    writeFileSync(
      config,
      `model_list:
  - { model_name: demo, params: { provider: fake, model: demo } }
  - { model_name: slow, params: { provider: fake, model: slow, latency_ms: 1500 } }
general_settings:
  master_key: ${MASTER}
  database_url: ${JSON.stringify(databaseUrl)}
  redis_url: ${JSON.stringify(TEST_REDIS_URL)}
  redis_key_prefix: ${uniqueName('sbc')}
  # Exactness is what is under test: a machine running the whole suite can delay Redis replies past
  # the 50 ms default, and fail_open would then (by design) admit on per-process counters.
  redis_command_timeout_ms: 2000
`,
    );
  });
  afterAll(async () => {
    for (const gateway of running) await gateway.stop('SIGKILL');
    await dropSchema(schema);
  });

  async function start(args: string[] = []): Promise<SpawnedGateway> {
    const gateway = await spawnGateway(['--config', config, ...args], { LOG_LEVEL: 'info' });
    running.push(gateway);
    // The first worker to listen answers the readiness poll; wait for every worker before sending load.
    const workers = Number(args[args.indexOf('--workers') + 1] ?? 1) || 1;
    for (
      let attempt = 0;
      attempt < 100 && (gateway.output().match(/Server listening/g) ?? []).length < workers;
      attempt++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return gateway;
  }

  async function createKey(gateway: SpawnedGateway, body: object): Promise<string> {
    const response = await fetch(`${gateway.baseUrl}/ui/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return ((await response.json()) as { key: string }).key;
  }

  async function fire(
    targets: SpawnedGateway[],
    key: string,
    model: string,
    count: number,
  ): Promise<Record<number, number>> {
    const statuses = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const target = targets[index % targets.length]!;
        const response = await fetch(`${target.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: `request ${index}` }] }),
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const tally: Record<number, number> = {};
    for (const status of statuses) tally[status] = (tally[status] ?? 0) + 1;
    return tally;
  }

  function servingProcesses(gateway: SpawnedGateway): Set<number> {
    const pids = new Set<number>();
    for (const line of gateway.output().split('\n')) {
      if (!line.includes('"request completed"') || !line.includes('/v1/chat/completions')) continue;
      pids.add((JSON.parse(line) as { pid: number }).pid);
    }
    return pids;
  }

  it('--workers 2: rpm_limit 50 admits exactly 50 of 200 concurrent requests', async () => {
    const gateway = await start(['--workers', '2']);
    const key = await createKey(gateway, { rpm_limit: 50 });
    expect(await fire([gateway], key, 'demo', 200)).toEqual({ 200: 50, 429: 150 });
    await gateway.stop();
    expect(servingProcesses(gateway).size).toBe(2);
  });

  it('two independent instances: rpm_limit 50 admits exactly 50 of 200 concurrent requests', async () => {
    const first = await start();
    const second = await start();
    const key = await createKey(first, { rpm_limit: 50 });
    expect(await fire([first, second], key, 'demo', 200)).toEqual({ 200: 50, 429: 150 });
  });

  it('--workers 2: max_parallel_requests 10 admits exactly 10 of 60 concurrent slow requests', async () => {
    const gateway = await start(['--workers', '2']);
    const key = await createKey(gateway, { max_parallel_requests: 10 });
    expect(await fire([gateway], key, 'slow', 60)).toEqual({ 200: 10, 429: 50 });
  });
});
