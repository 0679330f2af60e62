/**
 * Outbox mode survives `kill -9` (issue 12): a gateway on PostgreSQL serves 1,000 streamed requests and
 * is killed with SIGKILL while they run; two fresh replicas start on the same schema and settle the
 * outbox together. Every request whose stream reached `[DONE]` is in spend exactly once, none twice,
 * and the daily aggregates count each recorded request once.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema } from '../support/backends.ts';
import { type SpawnedGateway, spawnGateway } from '../support/spawn-gateway.ts';
import { realBackendsAvailable, TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

const MASTER = 'sk-master-outbox-crash-test';
const REQUESTS = 1_000;
const CONCURRENCY = 40;

describe.runIf(await realBackendsAvailable())('outbox mode across a SIGKILL', () => {
  const schema = uniqueName('t');
  const running: SpawnedGateway[] = [];
  let config: string;
  let client: pg.Client;

  beforeAll(async () => {
    client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA "${schema}"`);
    const databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    config = join(mkdtempSync(join(tmpdir(), 'switchboard-outbox-')), 'switchboard.yaml');
    writeFileSync(
      config,
      `model_list:
  - { model_name: demo, params: { provider: fake, model: demo, chunk_count: 4, chunk_delay_ms: 2 } }
general_settings:
  master_key: ${MASTER}
  database_url: ${JSON.stringify(databaseUrl)}
  redis_url: ${JSON.stringify(TEST_REDIS_URL)}
  redis_key_prefix: ${uniqueName('sbo')}
  redis_command_timeout_ms: 2000
  spend_ingestion_mode: outbox
`,
    );
  });
  afterAll(async () => {
    for (const gateway of running) await gateway.stop('SIGKILL');
    await client?.end();
    await dropSchema(schema);
  });

  async function start(): Promise<SpawnedGateway> {
    const gateway = await spawnGateway(['--config', config]);
    running.push(gateway);
    return gateway;
  }

  /** One streamed request with our own request id; true when its stream ended with [DONE]. */
  async function streamed(gateway: SpawnedGateway, key: string, requestId: string): Promise<boolean> {
    try {
      const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'x-request-id': requestId,
        },
        body: JSON.stringify({ model: 'demo', stream: true, messages: [{ role: 'user', content: 'count' }] }),
      });
      return (await response.text()).includes('data: [DONE]');
    } catch {
      return false; // the process died under it
    }
  }

  it('records every request that reached [DONE] exactly once after a crash and two settling replicas', async () => {
    const first = await start();
    const created = await fetch(`${first.baseUrl}/ui/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key_name: 'crash' }),
    });
    const { key } = (await created.json()) as { key: string };
    const done = new Set<string>();
    let next = 0;
    let finished = 0;
    const worker = async () => {
      while (next < REQUESTS) {
        const requestId = `crash-${next++}-${randomUUID()}`;
        if (await streamed(first, key, requestId)) done.add(requestId);
        finished++;
      }
    };
    const load = Promise.all(Array.from({ length: CONCURRENCY }, worker));
    // Kill the process in the middle of the load, with streams and outbox writes in flight.
    while (finished < REQUESTS / 2) await new Promise((resolve) => setTimeout(resolve, 5));
    first.child.kill('SIGKILL');
    await load;
    expect(done.size).toBeGreaterThan(REQUESTS / 4);
    expect(done.size).toBeLessThan(REQUESTS);

    // Two replicas settle what the dead one accepted.
    await Promise.all([start(), start()]);
    const count = async (query: string) => Number((await client.query(`${query}`)).rows[0].n);
    for (
      let wait = 0;
      wait < 200 && (await count(`select count(*) as n from "${schema}".spend_outbox`)) > 0;
      wait++
    )
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await count(`select count(*) as n from "${schema}".spend_outbox`)).toBe(0);

    const recorded = new Set(
      (
        await client.query(`select request_id from "${schema}".spend_logs where request_id like 'crash-%'`)
      ).rows.map((row) => row.request_id as string),
    );
    const missing = [...done].filter((id) => !recorded.has(id));
    expect(missing).toEqual([]);
    // Nothing twice: the aggregates count each recorded request once.
    const aggregated = await count(
      `select coalesce(sum(requests), 0) as n from "${schema}".spend_daily where scope_type = 'all'`,
    );
    const rows = await count(`select count(*) as n from "${schema}".spend_logs`);
    expect(aggregated).toBe(rows);
  }, 120_000);
});
