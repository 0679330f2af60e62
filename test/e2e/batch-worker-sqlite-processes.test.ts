/**
 * Two batch worker processes on one SQLite file (issue 15; not a supported setup, docs/batches.md The
 * worker): both poll before the batch exists, so they race for its items. Claims are single statements
 * under SQLite's one writer and results are fenced by lease tokens, so it is safe: both workers run
 * items, every item is answered upstream once, once in the one output file, and the counts add up.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type SpawnedGateway, spawnBatchWorker } from '../support/spawn-gateway.ts';

const MASTER = 'sk-master-batch-sqlite-test-0123456789';
const ITEMS = 40;

describe('two batch worker processes on one SQLite file', () => {
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-batch-sqlite-'));
  const workers: SpawnedGateway[] = [];
  let upstream: FakeOpenAiServer;
  let api: Gateway;
  let client: OpenAI;
  let configPath: string;

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    // Slow answers, so the two workers' rounds overlap.
    upstream.defaultScenario = { kind: 'answer', firstByteDelayMs: 200 };
    const yaml = `model_list:
  - model_name: gpt-test
    params: { provider: openai, model: upstream-gpt, api_base: "${upstream.baseUrl}", api_key: sk-up }
general_settings:
  master_key: ${MASTER}
  database_url: ${JSON.stringify(join(folder, 'switchboard.db'))}
  embeddings_batch_enabled: true
  batch_lease_seconds: 60
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
      body: JSON.stringify({ key_name: 'batch-sqlite' }),
    });
    const { key } = (await created.json()) as { key: string };
    client = new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
  }, 120_000);
  afterAll(async () => {
    for (const worker of workers) await worker.stop('SIGKILL');
    await api?.close(1_000, 0);
    await upstream?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const succeeded = async (worker: SpawnedGateway) => {
    const text = await (await fetch(`${worker.baseUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((row) => row.startsWith('gateway_batch_items_total{outcome="succeeded"} '));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  };

  it('runs every item once with both workers taking part', async () => {
    workers.push(...(await Promise.all([0, 1].map(() => spawnBatchWorker(['--config', configPath])))));
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
    let finished = batch;
    for (const deadline = Date.now() + 60_000; finished.status !== 'completed'; ) {
      if (Date.now() > deadline)
        throw new Error(
          `not completed: ${JSON.stringify(finished)}\n${workers.map((w) => w.output()).join('\n')}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
      finished = await client.batches.retrieve(batch.id);
    }
    expect(finished.request_counts).toEqual({ total: ITEMS, completed: ITEMS, failed: 0 });
    const answered = upstream.requests.map((request) => String(request.body?.messages?.[0]?.content));
    expect([...answered].sort()).toEqual([...ids].sort());
    const output = (await (await client.files.content(finished.output_file_id!)).text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).custom_id as string);
    expect([...output].sort()).toEqual([...ids].sort());
    const counts = await Promise.all(workers.map(succeeded));
    expect(counts[0]! + counts[1]!).toBe(ITEMS);
    expect(Math.min(...counts)).toBeGreaterThan(0);
  }, 120_000);
});
