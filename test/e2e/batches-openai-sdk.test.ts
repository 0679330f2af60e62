/**
 * OpenAI's batch guide against a real gateway with the openai SDK (issue 15), on SQLite and PostgreSQL:
 * upload, create, poll, download output for an embeddings batch and a chat batch (the in-gateway
 * worker runs the items through the pipelines), create refusals naming the field or line, and the
 * worker in readiness. Cancel and expiry: batches-cancel-expiry.test.ts.
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
type Checks = { checks: Record<string, boolean> };

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

  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`condition not met: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async function finished(id: string, caller = client) {
    for (let round = 0; round < 400; round++) {
      const batch = await caller.batches.retrieve(id);
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

  it("pages batches and files with the SDK's auto-pagination, newest first or oldest first", async () => {
    const own = new OpenAI({
      apiKey: await gateway.createKey({}),
      baseURL: `${gateway.baseUrl}/v1`,
      maxRetries: 0,
    });
    const created: string[] = [];
    for (const name of ['p', 'q', 'r']) {
      const file = await own.files.create({
        file: await toFile(Buffer.from(`${embedLine(name)}\n`), `${name}.jsonl`),
        purpose: 'batch',
      });
      created.push(
        (
          await own.batches.create({
            input_file_id: file.id,
            endpoint: '/v1/embeddings',
            completion_window: '24h',
          })
        ).id,
      );
    }
    // Finished first, so the worker's output files do not appear between the two file listings.
    for (const id of created) expect((await finished(id, own)).status).toBe('completed');
    const batches: string[] = [];
    for await (const batch of own.batches.list({ limit: 1 })) batches.push(batch.id);
    expect([...batches].sort()).toEqual([...created].sort());
    const all = (await own.files.list()).data.map((file) => file.id);
    const ascending: string[] = [];
    for await (const file of own.files.list({ limit: 2, order: 'asc' })) ascending.push(file.id);
    expect(ascending).toEqual([...all].reverse());
  });

  it('reports the running batch worker in readiness, and a stopped one as unready', async () => {
    const readiness = async () => {
      const response = await fetch(`${gateway.baseUrl}/health/readiness`);
      return { status: response.status, worker: ((await response.json()) as Checks).checks.batch_worker };
    };
    expect(await readiness()).toEqual({ status: 200, worker: true });
    await gateway.gateway.batchWorker?.stop();
    // The one-second readiness cache ends on its own; poll for the new answer instead of sleeping past it.
    expect(await until(readiness, (answer) => answer.status !== 200, 5_000)).toEqual({
      status: 503,
      worker: false,
    });
    gateway.gateway.batchWorker?.start();
    expect(await until(readiness, (answer) => answer.status === 200, 5_000)).toEqual({
      status: 200,
      worker: true,
    });
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
});
