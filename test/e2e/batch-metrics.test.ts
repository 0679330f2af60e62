/**
 * The batch worker's metrics on /metrics (issue 15), on SQLite and PostgreSQL: after a batch runs in the
 * gateway, items are counted by outcome, the batch's duration is observed once under its terminal
 * status, the ready-queue gauge is back to zero and no lease was reclaimed (one live worker).
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const chatLine = (id: string, model = 'demo') =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: `hello ${id}` }] },
  });

/** The value of one sample line of the exposition text (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe.each(await availableBackends())('batch worker metrics on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend, batches: true });
    client = new OpenAI({
      apiKey: await gateway.createKey({ models: ['demo'] }),
      baseURL: `${gateway.baseUrl}/v1`,
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('counts items by outcome and observes the batch duration under its terminal status', async () => {
    // `secret-model` is not allowed for the key: that item is refused (a failed item, in the error file).
    const lines = [chatLine('a'), chatLine('b'), chatLine('c', 'secret-model')];
    const file = await client.files.create({
      file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'in.jsonl'),
      purpose: 'batch',
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const deadline = Date.now() + 20_000;
    let batch = created;
    while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status)) {
      if (Date.now() > deadline) throw new Error(`batch did not finish: ${JSON.stringify(batch)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
      batch = await client.batches.retrieve(created.id);
    }
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });

    // The gauge is set at the start of each round: wait for a round that found nothing to run.
    let text = '';
    for (const until = Date.now() + 10_000; Date.now() < until; ) {
      text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
      if (sample(text, 'gateway_batch_queue_ready_items') === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(sample(text, 'gateway_batch_items_total{outcome="succeeded"}')).toBe(2);
    expect(sample(text, 'gateway_batch_items_total{outcome="failed"}')).toBe(1);
    expect(sample(text, 'gateway_batch_duration_seconds_count{status="completed"}')).toBe(1);
    expect(sample(text, 'gateway_batch_queue_ready_items')).toBe(0);
    expect(sample(text, 'gateway_batch_lease_reclaims_total')).toBe(0);
  });
});
