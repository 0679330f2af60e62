/**
 * Cancel and expiry of a running batch through the openai SDK (issue 15), on SQLite and PostgreSQL. The
 * upstream holds its answers, so the cancel or the end of the window lands while known items are in
 * flight; time is an injected clock. OpenAI's outcome: `cancelling` until the items in flight finish,
 * then `cancelled` (or `expired`) with those items in the output file and every unrun item in the
 * error file with code `batch_cancelled` (or `batch_expired`) and no response.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { HeldUpstream } from '../support/held-upstream.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const ITEMS = 20;
const DAY_MS = 24 * 3600 * 1000;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(await availableBackends())('batch cancel and expiry on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: HeldUpstream;
  let client: OpenAI;
  const clock = new ManualClock();

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await HeldUpstream.start();
    gateway = await startTestGateway({
      backend,
      batches: true,
      clock,
      yaml: `
model_list:
  - model_name: held
    params: { provider: openai, model: held, api_base: "${upstream.baseUrl}", api_key: sk-upstream }
    model_info: { id: held-1, mode: embedding }
`,
    });
    client = new OpenAI({
      apiKey: await gateway.createKey({}),
      baseURL: `${gateway.baseUrl}/v1`,
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.hold();
  });

  async function startBatch() {
    const lines = Array.from({ length: ITEMS }, (_, index) =>
      JSON.stringify({
        custom_id: `r${index}`,
        method: 'POST',
        url: '/v1/embeddings',
        body: { model: 'held', input: `text ${index}` },
      }),
    );
    const file = await client.files.create({
      file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'in.jsonl'),
      purpose: 'batch',
    });
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/embeddings',
      completion_window: '24h',
    });
    // The worker has claimed items and sent them; they wait in the upstream.
    await until(
      async () => upstream.requests.length,
      (count) => count > 0,
    );
    return batch;
  }

  const lines = async (fileId: string | null | undefined) =>
    fileId
      ? (await (await client.files.content(fileId)).text())
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line))
      : [];

  /** The finished batch's files: items that reached the upstream answered, every other one `code`. */
  async function expectPartialFiles(
    batch: OpenAI.Batches.Batch,
    code: 'batch_cancelled' | 'batch_expired',
  ): Promise<void> {
    const ran = upstream.requests.map((request) => `r${String(request.body.input).split(' ')[1]}`);
    expect(ran.length).toBeGreaterThan(0);
    expect(ran.length).toBeLessThan(ITEMS);
    expect(batch.request_counts).toEqual({ total: ITEMS, completed: ran.length, failed: 0 });
    const output = await lines(batch.output_file_id);
    expect(output.map((line) => line.custom_id).sort()).toEqual([...ran].sort());
    for (const line of output) expect(line).toMatchObject({ response: { status_code: 200 }, error: null });
    const failed = await lines(batch.error_file_id);
    expect(failed).toHaveLength(ITEMS - ran.length);
    for (const line of failed) {
      expect(ran).not.toContain(line.custom_id);
      expect(line).toEqual({
        id: expect.stringMatching(/^batch_req_/),
        custom_id: expect.any(String),
        response: null,
        error: { code, message: expect.any(String) },
      });
    }
  }

  it('cancels mid-run: cancelling while items are in flight, then cancelled with partial output', async () => {
    const created = await startBatch();
    const cancelling = await client.batches.cancel(created.id);
    expect(cancelling.status).toBe('cancelling');
    expect(cancelling.cancelling_at).toBe(Math.floor(clock.now() / 1000));
    // Nothing finalizes while the claimed items are still running.
    expect((await client.batches.retrieve(created.id)).status).toBe('cancelling');
    expect((await client.batches.cancel(created.id)).status).toBe('cancelling');
    upstream.release();
    const batch = await until(
      () => client.batches.retrieve(created.id),
      (current) => current.status === 'cancelled',
    );
    expect(batch.cancelled_at).toBe(Math.floor(clock.now() / 1000));
    expect(batch.completed_at).toBeNull();
    await expectPartialFiles(batch, 'batch_cancelled');
    await expect(client.batches.cancel(created.id)).rejects.toMatchObject({ status: 409 });
  });

  it('expires when the 24h window passes: finished items in the output file, the rest batch_expired', async () => {
    const created = await startBatch();
    expect(created.expires_at).toBe(created.created_at + 24 * 3600);
    clock.advance(DAY_MS + 1_000);
    upstream.release();
    const batch = await until(
      () => client.batches.retrieve(created.id),
      (current) => current.status === 'expired',
    );
    expect(batch.expired_at).toBe(Math.floor(clock.now() / 1000));
    expect(batch.completed_at).toBeNull();
    await expectPartialFiles(batch, 'batch_expired');
  });
});
