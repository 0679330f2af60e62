/**
 * A batch worker process killed mid-batch (issue 15), on PostgreSQL and on SQLite (one file shared by
 * the processes; a restarted worker on SQLite is the supported recovery): the API runs in this process with
 * its batch worker off; a first `batch-worker` process claims items whose upstream calls the fake
 * upstream holds, and is SIGKILLed while they are leased; a second process takes the batch over once
 * the leases expire (general_settings.batch_lease_seconds: 5) and finishes it, then exits 0 on SIGTERM.
 *
 * "No item run twice" means: an item whose call was in flight at the kill may be sent upstream again
 * (the held call never answered), but every item is answered upstream exactly once, its custom_id is
 * once in the output file, and spend has exactly one charge per item (one spend record per line).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { dropSchema } from '../support/backends.ts';
import { type SpawnedGateway, spawnBatchWorker } from '../support/spawn-gateway.ts';
import { realBackendsAvailable, TEST_DATABASE_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

const MASTER = 'sk-master-batch-crash-test-0123456789';
const ITEMS = 20;
/** Items a worker claims per round (BatchWorker's default claim size): the first worker's held calls. */
const CLAIMED = 8;

/** Where the processes keep their data: a fresh PostgreSQL schema, or a SQLite file in the test folder. */
interface Store {
  name: string;
  open(folder: string): Promise<{ databaseUrl: string; cleanup(): Promise<void> }>;
}

const postgres: Store = {
  name: 'PostgreSQL',
  async open() {
    const schema = uniqueName('t');
    const sql = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await sql.connect();
    try {
      await sql.query(`CREATE SCHEMA "${schema}"`);
    } finally {
      await sql.end();
    }
    return {
      databaseUrl: `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      cleanup: () => dropSchema(schema),
    };
  },
};
const sqlite: Store = {
  name: 'SQLite',
  open: async (folder) => ({ databaseUrl: join(folder, 'switchboard.db'), cleanup: async () => {} }),
};

describe.each((await realBackendsAvailable()) ? [postgres, sqlite] : [sqlite])(
  'a batch worker SIGKILLed mid-batch on $name',
  (store) => {
    const folder = mkdtempSync(join(tmpdir(), 'switchboard-batch-crash-'));
    const workers: SpawnedGateway[] = [];
    let upstream: FakeOpenAiServer;
    let api: Gateway;
    let client: OpenAI;
    let cleanup: () => Promise<void> = async () => {};
    let configPath: string;

    beforeAll(async () => {
      upstream = await FakeOpenAiServer.start();
      const opened = await store.open(folder);
      cleanup = opened.cleanup;
      const databaseUrl = opened.databaseUrl;
      const yaml = `model_list:
  - model_name: gpt-test
    params: { provider: openai, model: upstream-gpt, api_base: "${upstream.baseUrl}", api_key: sk-up }
general_settings:
  master_key: ${MASTER}
  database_url: ${JSON.stringify(databaseUrl)}
  embeddings_batch_enabled: true
  batch_lease_seconds: 5
`;
      configPath = join(folder, 'switchboard.yaml');
      writeFileSync(configPath, yaml);
      const parsed = parseConfig(yaml, { path: undefined, env: {}, dataDir: folder, source: 'test' });
      api = await createGateway({
        config: parsed,
        masterKey: MASTER,
        logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
        batchWorker: false,
        collectProcessMetrics: false,
      });
      const baseUrl = await api.app.listen({ port: 0, host: '127.0.0.1' });
      const created = await fetch(`${baseUrl}/ui/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
        body: JSON.stringify({ key_name: 'batch-crash' }),
      });
      const { key } = (await created.json()) as { key: string };
      client = new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    });
    afterAll(async () => {
      for (const worker of workers) await worker.stop('SIGKILL');
      await api?.close(1_000, 0);
      await upstream?.close();
      await cleanup();
      rmSync(folder, { recursive: true, force: true });
    });

    async function start(): Promise<SpawnedGateway> {
      const worker = await spawnBatchWorker(['--config', configPath]);
      workers.push(worker);
      return worker;
    }

    async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000) {
      for (const deadline = Date.now() + timeoutMs; !(await condition()); ) {
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for ${what}; workers said:\n${workers.map((w) => w.output()).join('\n')}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    /** The custom_id of an upstream request (its message is the custom_id). */
    const customIdOf = (body: any) => String(body?.messages?.[0]?.content);

    it('a second worker finishes the batch with every item answered, output and charged once', async () => {
      const ids = Array.from({ length: ITEMS }, (_, index) => `item-${index}`);
      const lines = ids.map((id) =>
        JSON.stringify({
          custom_id: id,
          method: 'POST',
          url: '/v1/chat/completions',
          body: { model: 'gpt-test', messages: [{ role: 'user', content: id }] },
        }),
      );
      const file = await client.files.create({
        file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'in.jsonl'),
        purpose: 'batch',
      });
      const batch = await client.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });

      // The first worker's calls are held upstream: it is killed while its items are leased.
      upstream.defaultScenario = { kind: 'hang' };
      const first = await start();
      await until(() => upstream.requests.length >= CLAIMED, 'the first worker to send its claimed items');
      first.child.kill('SIGKILL');
      await until(() => first.child.signalCode !== null, 'the first worker to die');
      const held = upstream.requests.map((request) => customIdOf(request.body));
      expect(held).toHaveLength(CLAIMED);
      const leased = await api.database.db
        .selectFrom('batch_items')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('batch_id', '=', batch.id)
        .where('status', '=', 'leased')
        .executeTakeFirstOrThrow();
      expect(Number(leased.n)).toBe(CLAIMED);

      upstream.defaultScenario = { kind: 'answer' };
      const answeredFrom = upstream.requests.length;
      const second = await start();
      await until(
        async () => (await client.batches.retrieve(batch.id)).status === 'completed',
        'the second worker to complete the batch',
        60_000,
      );
      const metrics = await (await fetch(`${second.baseUrl}/metrics`)).text();
      expect(metrics).toContain(`gateway_batch_lease_reclaims_total ${CLAIMED}`);
      expect(await second.stop('SIGTERM')).toBe(0);

      const finished = await client.batches.retrieve(batch.id);
      expect(finished.request_counts).toEqual({ total: ITEMS, completed: ITEMS, failed: 0 });
      const answered = upstream.requests.slice(answeredFrom).map((request) => customIdOf(request.body));
      expect([...answered].sort()).toEqual([...ids].sort());
      for (const id of held) expect(answered.filter((other) => other === id)).toHaveLength(1);

      const output = (await (await client.files.content(finished.output_file_id!)).text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).custom_id as string);
      expect([...output].sort()).toEqual([...ids].sort());
      expect(finished.error_file_id).toBeNull();

      // One spend record per line (request ids are `<batch>-<line>-<lease token>`).
      const spend = await api.database.db
        .selectFrom('spend_logs')
        .select('request_id')
        .where('request_id', 'like', `${batch.id}-%`)
        .execute();
      const lineOf = (requestId: string) => requestId.slice(batch.id.length + 1).split('-')[0];
      expect(spend).toHaveLength(ITEMS);
      expect(new Set(spend.map((row) => lineOf(row.request_id))).size).toBe(ITEMS);
    }, 120_000);
  },
);
