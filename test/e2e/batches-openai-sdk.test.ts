/**
 * OpenAI's batch guide against a real gateway with the openai SDK (issue 15), on SQLite and PostgreSQL:
 * upload, create, poll, download output for an embeddings batch and a chat batch (the in-gateway
 * worker runs the items through the pipelines), create refusals naming the field or line, and cancel.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const models = `
model_list:
  - model_name: demo
    params: { provider: fake, model: demo }
    model_info: { id: demo-fake }
  - model_name: demo-embed
    params: { provider: fake, model: demo-embed }
    model_info: { id: demo-embed-fake, mode: embedding }
`;

const embedLine = (id: string) =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/embeddings',
    body: { model: 'demo-embed', input: `text ${id}` },
  });
const chatLine = (id: string) =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'demo', messages: [{ role: 'user', content: `hello ${id}` }] },
  });

describe.each(await availableBackends())('batches with the openai SDK on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend, batches: true, yaml: models });
    client = new OpenAI({
      apiKey: await gateway.createKey({}),
      baseURL: `${gateway.baseUrl}/v1`,
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  async function upload(lines: string[]) {
    return client.files.create({
      file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'in.jsonl'),
      purpose: 'batch',
    });
  }

  async function finished(id: string) {
    for (let round = 0; round < 400; round++) {
      const batch = await client.batches.retrieve(id);
      if (['completed', 'failed', 'expired', 'cancelled'].includes(batch.status)) return batch;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`batch ${id} did not finish`);
  }

  async function outputLines(fileId: string | null | undefined) {
    if (!fileId) return [];
    const text = await (await client.files.content(fileId)).text();
    return text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
  }

  it('runs an embeddings batch and a chat batch to their output files', async () => {
    for (const [endpoint, make] of [
      ['/v1/embeddings', embedLine],
      ['/v1/chat/completions', chatLine],
    ] as const) {
      const file = await upload(['a', 'b', 'c'].map(make));
      const created = await client.batches.create({
        input_file_id: file.id,
        endpoint,
        completion_window: '24h',
        metadata: { run: 'x' },
      });
      expect(created).toMatchObject({
        object: 'batch',
        status: 'validating',
        endpoint,
        metadata: { run: 'x' },
      });
      const batch = await finished(created.id);
      expect(batch.status, JSON.stringify(batch)).toBe('completed');
      expect(batch.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
      const lines = await outputLines(batch.output_file_id);
      expect(lines.map((line) => line.custom_id)).toEqual(['a', 'b', 'c']);
      for (const line of lines) expect(line.response.status_code).toBe(200);
      expect(batch.error_file_id).toBeNull();
      // Batches of the same second are ordered by id, so the newest is not necessarily first.
      const list = await client.batches.list({ limit: 100 });
      expect(list.data.map((item) => item.id)).toContain(created.id);
    }
  });

  it('reports the running batch worker in readiness', async () => {
    const response = await fetch(`${gateway.baseUrl}/health/readiness`);
    const body = (await response.json()) as { checks: Record<string, boolean> };
    expect(body.checks.batch_worker).toBe(true);
    await gateway.gateway.batchWorker?.stop();
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the one-second readiness cache
    const stopped = await fetch(`${gateway.baseUrl}/health/readiness`);
    expect(stopped.status).toBe(503);
    expect(((await stopped.json()) as { checks: Record<string, boolean> }).checks.batch_worker).toBe(false);
    gateway.gateway.batchWorker?.start();
  });

  it('refuses a bad completion_window, endpoint or file with a 400 naming it', async () => {
    const file = await upload([embedLine('a')]);
    const refusal = async (body: Record<string, unknown>) => {
      try {
        await client.batches.create(body as never);
        return undefined;
      } catch (error) {
        return { status: (error as { status?: number }).status, param: (error as { param?: string }).param };
      }
    };
    expect(
      await refusal({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '48h' }),
    ).toEqual({
      status: 400,
      param: 'completion_window',
    });
    expect(
      await refusal({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    ).toEqual({
      status: 400,
      param: 'url',
    });
    expect(
      await refusal({ input_file_id: 'file-nope', endpoint: '/v1/embeddings', completion_window: '24h' }),
    ).toEqual({
      status: 400,
      param: 'input_file_id',
    });
  });

  it('cancels a running batch (a 409 when the worker already finished it)', async () => {
    const file = await upload(Array.from({ length: 20 }, (_, index) => embedLine(`n${index}`)));
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/embeddings',
      completion_window: '24h',
    });
    const cancelled = await client.batches.cancel(created.id).catch((error) => error);
    const batch = await finished(created.id);
    if (cancelled instanceof Error) {
      // The worker was faster: the batch finished before the cancel.
      expect((cancelled as { status?: number }).status).toBe(409);
      expect(batch.status).toBe('completed');
    } else {
      expect(['cancelling', 'cancelled']).toContain(cancelled.status);
      expect(batch.status).toBe('cancelled');
      expect(batch.cancelled_at).not.toBeNull();
    }
  });
});
