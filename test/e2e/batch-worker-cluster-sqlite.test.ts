/**
 * `serve --workers 2` on SQLite runs one batch worker, not one per process (issue 15 review, finding
 * 11; docs/batches.md The worker): the primary gives the batch role to one forked worker, and to the
 * replacement it forks when that worker dies. Seen from outside: readiness answers from one process
 * carry the `batch_worker` check and from the other do not (each request on a fresh connection, so the
 * cluster's round-robin reaches both); the role is read from each child's environment to kill its
 * holder. Redis is needed because --workers above 1 requires a shared store.
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SpawnedGateway, spawnGateway } from '../support/spawn-gateway.ts';
import { realBackendsAvailable, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

const MASTER = 'sk-master-batch-cluster-test-0123456789';

describe.runIf(await realBackendsAvailable())('serve --workers 2 on SQLite', () => {
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-batch-cluster-'));
  let gateway: SpawnedGateway;

  beforeAll(async () => {
    const config = join(folder, 'switchboard.yaml');
    writeFileSync(
      config,
      `model_list:
  - { model_name: demo, params: { provider: fake, model: demo } }
general_settings:
  master_key: ${MASTER}
  database_url: ${JSON.stringify(join(folder, 'switchboard.db'))}
  redis_url: ${JSON.stringify(TEST_REDIS_URL)}
  redis_key_prefix: ${uniqueName('sbb')}
  embeddings_batch_enabled: true
`,
    );
    gateway = await spawnGateway(['--config', config, '--workers', '2', '--data-dir', folder], {
      LOG_LEVEL: 'info',
    });
    await until(() => listening() === 2, 'both workers to listen');
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    for (const pid of safeChildren()) process.kill(pid, 'SIGKILL');
    rmSync(folder, { recursive: true, force: true });
  });

  const listening = () => (gateway.output().match(/Server listening/g) ?? []).length;
  const children = () =>
    execFileSync('ps', ['-o', 'pid=', '--ppid', String(gateway.child.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((pid) => pid > 0);
  const safeChildren = () => {
    try {
      return gateway ? children() : [];
    } catch {
      return [];
    }
  };
  /** The children whose environment gives them the batch role. */
  const holders = () =>
    children().filter((pid) =>
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .includes('SWITCHBOARD_CLUSTER_BATCH_WORKER=on'),
    );

  /** Whether each of `count` readiness answers (fresh connections) carries the batch_worker check. */
  const sampleReadiness = (count: number) =>
    Promise.all(
      Array.from({ length: count }, () => {
        return new Promise<boolean>((resolve, reject) => {
          http
            .get(`${gateway.baseUrl}/health/readiness`, { agent: false }, (response) => {
              let body = '';
              response.on('data', (chunk) => {
                body += chunk;
              });
              response.on('end', () => resolve('batch_worker' in (JSON.parse(body).checks ?? {})));
            })
            .on('error', reject);
        });
      }),
    );

  it('one process runs the batch worker; its replacement takes the role when it dies', async () => {
    expect(children()).toHaveLength(2);
    // Without the role, both processes would report the check (both run a worker).
    expect(new Set(await sampleReadiness(12))).toEqual(new Set([true, false]));
    expect(holders()).toHaveLength(1);

    const [holder] = holders();
    process.kill(holder!, 'SIGKILL');
    await until(
      () => children().length === 2 && !children().includes(holder!) && listening() === 3,
      'the primary to fork a replacement',
    );
    expect(holders()).toHaveLength(1);
    expect(holders()[0]).not.toBe(holder);
    expect(new Set(await sampleReadiness(12))).toEqual(new Set([true, false]));

    // And it runs batches.
    const key = (await (
      await fetch(`${gateway.baseUrl}/ui/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
        body: JSON.stringify({ key_name: 'cluster' }),
      })
    ).json()) as { key: string };
    const client = new OpenAI({ apiKey: key.key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    const lines = ['a', 'b', 'c'].map((id) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'demo', messages: [{ role: 'user', content: id }] },
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
    await until(async () => {
      finished = await client.batches.retrieve(batch.id);
      return finished.status === 'completed';
    }, 'the batch to complete');
    expect(finished.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
  }, 90_000);

  async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000) {
    for (const deadline = Date.now() + timeoutMs; !(await condition()); ) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${gateway.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
});
