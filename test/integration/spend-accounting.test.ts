/**
 * Spend accounting (issue 12): every proxied request becomes one spend record with its tokens by kind,
 * cost from the deployment's prices, status, latency and stream flag, written at settlement; daily
 * aggregates follow. Legacy mode keeps answering through a telemetry outage and writes the retained
 * records after it; outbox mode withholds the terminal marker (and answers JSON with 503) until the
 * charge is durably accepted, and its worker moves each charge into spend exactly once.
 */
import { sql } from 'kysely';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { acceptInserts, refuseInserts } from '../support/database-outage.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const prices = 'input_cost_per_token: 0.000002, output_cost_per_token: 0.00001';

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.each(await availableBackends())('spend accounting on %s', (_name, makeBackend) => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  const gateways: TestGateway[] = [];

  const models = () => `
model_list:
  - model_name: priced
    params: { provider: openai, model: up, api_base: "${upstream.baseUrl}" }
    model_info: { id: priced-1, ${prices} }
  - model_name: unpriced
    params: { provider: openai_compatible, model: mystery, api_base: "${upstream.baseUrl}" }
    model_info: { id: unpriced-1 }
`;

  async function start(mode: 'legacy' | 'outbox'): Promise<TestGateway> {
    const gateway = await startTestGateway({
      backend,
      yaml: models(),
      generalSettings: `  spend_ingestion_mode: ${mode}\n  spend_finalization_timeout_ms: 2000\n`,
    });
    gateways.push(gateway);
    return gateway;
  }

  const logs = (gateway: TestGateway) =>
    gateway.gateway.database.db
      .selectFrom('spend_logs' as never)
      .selectAll()
      .orderBy('created_at' as never)
      .execute() as Promise<any[]>;

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await FakeOpenAiServer.start();
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(() => upstream.reset());

  describe('legacy mode', () => {
    let gateway: TestGateway;
    let client: OpenAI;
    let key: string;
    beforeAll(async () => {
      gateway = await start('legacy');
      key = await gateway.createKey({ key_name: 'spender' });
      client = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    });
    beforeEach(async () => {
      await sql`delete from spend_logs`.execute(gateway.gateway.database.db);
      await sql`delete from spend_daily`.execute(gateway.gateway.database.db);
    });

    it('records a JSON answer with its tokens, cost at the deployment price, status and routing facts', async () => {
      const { response } = await client.chat.completions
        .create({ model: 'priced', messages: [{ role: 'user', content: 'hello there' }] })
        .withResponse();
      const requestId = response.headers.get('x-request-id');
      const [row] = await until(
        () => logs(gateway),
        (rows) => rows.length === 1,
      );
      expect(row).toMatchObject({
        request_id: requestId,
        model: 'priced',
        model_group: 'priced',
        deployment_id: 'priced-1',
        endpoint: '/v1/chat/completions',
        attempts: 1,
        stream: 0,
        status: 200,
        usage_known: 1,
      });
      const prompt = Number(row.prompt_tokens);
      const completion = Number(row.completion_tokens);
      expect(completion).toBe(3);
      expect(row.cost).toBeCloseTo(prompt * 0.000002 + completion * 0.00001, 12);
      expect(row.key_id).toEqual(expect.any(String));
    });

    it('records a stream before its [DONE], with time to first token, and aggregates per day and scope', async () => {
      const stream = await client.chat.completions.create({
        model: 'priced',
        stream: true,
        messages: [{ role: 'user', content: 'count to three' }],
      });
      for await (const _chunk of stream) {
        // drain
      }
      // Spec rule 5: the writer is awaited before [DONE], so the row is there once the stream ended.
      const rows = await logs(gateway);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ stream: 1, status: 200, usage_known: 1 });
      expect(rows[0].ttft_ms).not.toBeNull();
      const daily = (
        await sql`select scope_type, requests, cost from spend_daily order by scope_type`.execute(
          gateway.gateway.database.db,
        )
      ).rows as any[];
      expect(daily.map((entry) => entry.scope_type)).toEqual(['all', 'key']);
      expect(daily.every((entry) => Number(entry.requests) === 1)).toBe(true);
      expect(Number(daily[0].cost)).toBeCloseTo(rows[0].cost, 12);
    });

    it('records unknown usage as unknown (never estimated), an unknown price as cost null, failures with their status', async () => {
      upstream.enqueue({ kind: 'answer', omitUsage: true });
      await client.chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'a' }] });
      await client.chat.completions.create({ model: 'unpriced', messages: [{ role: 'user', content: 'b' }] });
      upstream.enqueue({ kind: 'error', status: 400 });
      await client.chat.completions
        .create({ model: 'priced', messages: [{ role: 'user', content: 'c' }] })
        .catch(() => {});
      const rows = await until(
        () => logs(gateway),
        (found) => found.length === 3,
      );
      const byStatus = rows.map((row) => [
        row.model,
        row.status,
        row.usage_known,
        row.total_tokens === null,
        row.cost,
      ]);
      expect(byStatus).toEqual(
        expect.arrayContaining([
          ['priced', 200, 0, true, null],
          ['unpriced', 200, 1, false, null],
          ['priced', 400, 1, false, 0],
        ]),
      );
    });

    it('marks a stream the caller left as 499, charged from the usage event read after it left (issue 25)', async () => {
      upstream.enqueue({ kind: 'answer', text: 'one two three four five six', chunkDelayMs: 40 });
      const controller = new AbortController();
      const stream = await client.chat.completions.create(
        { model: 'priced', stream: true, messages: [{ role: 'user', content: 'long' }] },
        { signal: controller.signal },
      );
      await stream[Symbol.asyncIterator]().next();
      controller.abort();
      const [row] = await until(
        () => logs(gateway),
        (found) => found.length === 1,
      );
      expect(row).toMatchObject({ status: 499, usage_known: 1, usage_estimated: 0, completion_tokens: 6 });
      expect(Number(row.cost)).toBeGreaterThan(0);
    });

    it('keeps answering while the telemetry database refuses writes, and writes the retained records after', async () => {
      const { db } = gateway.gateway.database;
      await refuseInserts(db, backend.schema !== undefined, 'spend_logs');
      try {
        for (const text of ['x', 'y']) {
          const answer = await client.chat.completions.create({
            model: 'priced',
            messages: [{ role: 'user', content: text }],
          });
          expect(answer.choices[0]!.message.content).toBe(`echo: ${text}`);
        }
        // The batch was refused and kept (JSON answers do not wait for it: it lingers, then fails).
        await until(
          async () => (await fetch(`${gateway.baseUrl}/metrics`)).text(),
          (text) => /gateway_accounting_writes_total\{mode="legacy",outcome="retained"\} [2-9]/.test(text),
        );
      } finally {
        await acceptInserts(db, backend.schema !== undefined, 'spend_logs');
      }
      const rows = await until(
        () => logs(gateway),
        (found) => found.length === 2,
      );
      expect(rows.map((row) => row.status)).toEqual([200, 200]);
      const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/gateway_accounting_writes_total\{mode="legacy",outcome="retained"\} [1-9]/);
      expect(metrics).toMatch(
        /gateway_accounting_writes_total\{mode="legacy",outcome="written_after_retry"\} [1-9]/,
      );
      expect(metrics).toMatch(/gateway_spend_total\{model="priced"\} \d/);
    });
  });

  describe('outbox mode', () => {
    let gateway: TestGateway;
    let client: OpenAI;
    beforeAll(async () => {
      gateway = await start('outbox');
      client = new OpenAI({
        apiKey: await gateway.createKey(),
        baseURL: `${gateway.baseUrl}/v1`,
        maxRetries: 0,
      });
    });
    beforeEach(async () => {
      await sql`delete from spend_logs`.execute(gateway.gateway.database.db);
    });

    it('reports the telemetry database and its worker in readiness, both ready', async () => {
      // The values, not the names: a check reported false must fail this (issue 25).
      const readiness = (await (await fetch(`${gateway.baseUrl}/health/readiness`)).json()) as {
        checks: Record<string, boolean>;
      };
      expect(readiness.checks).toMatchObject({ telemetry_database: true, telemetry_worker_database: true });
    });

    it('accepts the charge durably before [DONE], then the worker moves it into spend once', async () => {
      const { data: stream, response } = await client.chat.completions
        .create({ model: 'priced', stream: true, messages: [{ role: 'user', content: 'one two' }] })
        .withResponse();
      for await (const _chunk of stream) {
        // drain to [DONE]
      }
      const rows = await until(
        () => logs(gateway),
        (found) => found.length === 1,
      );
      expect(rows[0]).toMatchObject({
        request_id: response.headers.get('x-request-id'),
        status: 200,
        stream: 1,
      });
      const outbox = (await sql`select count(*) as n from spend_outbox`.execute(gateway.gateway.database.db))
        .rows as any[];
      expect(Number(outbox[0].n)).toBe(0);
    });

    it('ends a stream without [DONE] and answers JSON 503 when the charge cannot be accepted', async () => {
      const { db } = gateway.gateway.database;
      await refuseInserts(db, backend.schema !== undefined, 'spend_outbox');
      try {
        const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'priced', stream: true, messages: [{ role: 'user', content: 'x' }] }),
        });
        const text = await response.text();
        expect(text).toContain('echo');
        expect(text).not.toContain('[DONE]');
        expect(text).toContain('spend_not_accepted');
        const json = await client.chat.completions
          .create({ model: 'priced', messages: [{ role: 'user', content: 'y' }] })
          .catch((error: unknown) => error);
        expect(json).toBeInstanceOf(OpenAI.InternalServerError);
        expect((json as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      } finally {
        await acceptInserts(db, backend.schema !== undefined, 'spend_outbox');
      }
    });
  });
});
