/**
 * Batch files off and on another store, on SQLite and PostgreSQL: every file and batch route answers
 * 404 batches_disabled while batches are off; the directory store keeps 0600 files in a 0700 folder,
 * removes them on delete and feeds a batch's items from disk; the worker's output files (BatchFiles.writeOutput) are visible to the owner's
 * team only; a file over batch_file_max_bytes is a 413 naming the setting.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const input = `${JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/embeddings', body: { model: 'demo', input: 'x' } })}\n`;

describe.each(await availableBackends())('batch file stores on %s', (_name, makeBackend) => {
  let backend: Backend;
  let off: TestGateway;
  let on: TestGateway;
  let parent: string;
  let folder: string;

  beforeAll(async () => {
    backend = makeBackend();
    parent = mkdtempSync(join(tmpdir(), 'switchboard-batch-files-'));
    folder = join(parent, 'files');
    off = await startTestGateway({ backend });
    on = await startTestGateway({
      backend,
      batches: true,
      generalSettings: `  batch_file_store: ${JSON.stringify(folder)}\n  batch_file_max_bytes: 4096\n`,
    });
    await on.admin('POST', '/ui/api/teams', { team_id: 'team-out' });
  });
  afterAll(async () => {
    await on?.close();
    await off?.close();
    await backend?.cleanup();
    rmSync(parent, { recursive: true, force: true });
  });

  it('answers 404 batches_disabled on every file and batch route, with or without /v1, while batches are off', async () => {
    const key = await off.createKey({});
    const routes = [
      ['POST', '/files'],
      ['GET', '/files'],
      ['GET', '/files/file-x'],
      ['GET', '/files/file-x/content'],
      ['DELETE', '/files/file-x'],
      ['POST', '/batches'],
      ['GET', '/batches'],
      ['GET', '/batches/batch_x'],
      ['POST', '/batches/batch_x/cancel'],
    ] as const;
    for (const [method, path] of routes.flatMap(([method, path]) => [
      [method, `/v1${path}`],
      [method, path],
    ])) {
      const response = await fetch(off.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status, `${method} ${path}`).toBe(404);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('batches_disabled');
      expect(body.error.message).toContain('general_settings.embeddings_batch_enabled: true');
    }
    const client = new OpenAI({ apiKey: key, baseURL: `${off.baseUrl}/v1`, maxRetries: 0 });
    await expect(client.files.list()).rejects.toMatchObject({ status: 404, code: 'batches_disabled' });
  });

  it('keeps files 0600 in a 0700 folder and removes them on delete', async () => {
    const client = new OpenAI({ apiKey: await on.createKey({}), baseURL: `${on.baseUrl}/v1`, maxRetries: 0 });
    const file = await client.files.create({
      file: await toFile(Buffer.from(input), 'in.jsonl'),
      purpose: 'batch',
    });
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(join(folder, file.id)).mode & 0o777).toBe(0o600);
    expect(await (await client.files.content(file.id)).text()).toBe(input);
    await client.files.delete(file.id);
    expect(readdirSync(folder)).not.toContain(file.id);
  });

  it('creates and runs a batch whose input file is in the directory store', async () => {
    const client = new OpenAI({ apiKey: await on.createKey({}), baseURL: `${on.baseUrl}/v1`, maxRetries: 0 });
    const lines = Array.from({ length: 20 }, (_, index) =>
      JSON.stringify({
        custom_id: `d${index}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'demo', messages: [{ role: 'user', content: 'hi' }] },
      }),
    );
    const file = await client.files.create({
      file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'dir.jsonl'),
      purpose: 'batch',
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect(created.request_counts).toEqual({ total: 20, completed: 0, failed: 0 });
    const deadline = Date.now() + 10_000;
    let batch = created;
    while (batch.status !== 'completed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      batch = await client.batches.retrieve(created.id);
    }
    expect(batch.request_counts).toEqual({ total: 20, completed: 20, failed: 0 });
    const output = (await (await client.files.content(batch.output_file_id!)).text()).trim().split('\n');
    expect(output.map((line) => JSON.parse(line).custom_id)).toEqual(lines.map((_, index) => `d${index}`));
  });

  it('refuses a file over batch_file_max_bytes with 413 naming the setting, storing nothing', async () => {
    const client = new OpenAI({ apiKey: await on.createKey({}), baseURL: `${on.baseUrl}/v1`, maxRetries: 0 });
    const before = readdirSync(folder).length;
    const big = input.repeat(200);
    const error = await client.files
      .create({
        file: await toFile(Buffer.from(big.replaceAll('"a"', () => `"${Math.random()}"`)), 'big.jsonl'),
        purpose: 'batch',
      })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 413 });
    expect((error as Error).message).toContain('general_settings.batch_file_max_bytes');
    expect(readdirSync(folder).length).toBe(before);
  });

  it("writes the worker's output files visible to the owner's team, as purpose batch_output", async () => {
    const files = on.gateway.batchFiles;
    if (!files) throw new Error('batch files are on');
    const record = await files.writeOutput(
      { keyId: 'key-someone', teamId: 'team-out' },
      'batch_x_output.jsonl',
      (async function* () {
        yield JSON.stringify({ id: 'r1', custom_id: 'a' });
        yield JSON.stringify({ id: 'r2', custom_id: 'b' });
      })(),
    );
    expect(record).toMatchObject({ purpose: 'batch_output', line_count: 2, storage: 'directory' });
    const teammate = new OpenAI({
      apiKey: await on.createKey({ team_id: 'team-out' }),
      baseURL: `${on.baseUrl}/v1`,
      maxRetries: 0,
    });
    const text = await (await teammate.files.content(record.id)).text();
    expect(text.split('\n')).toEqual(['{"id":"r1","custom_id":"a"}', '{"id":"r2","custom_id":"b"}', '']);
    expect(record.bytes).toBe(Buffer.byteLength(text));
    const stranger = new OpenAI({
      apiKey: await on.createKey({}),
      baseURL: `${on.baseUrl}/v1`,
      maxRetries: 0,
    });
    await expect(stranger.files.retrieve(record.id)).rejects.toMatchObject({ status: 404 });
  });
});
