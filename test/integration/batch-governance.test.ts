/**
 * Batch items are governed calls (issue 15), on SQLite and PostgreSQL, with the clock injected: a key's
 * rpm limit holds across its batch and its synchronous traffic (items past the limit wait, not fail,
 * and run once the window moves), and every item leaves one spend record with the owner's key and team,
 * its model and usage, a failed item charged only what its upstream attempts cost, and the key's daily
 * totals equal the sum of its items (docs/spend.md).
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const INPUT_PRICE = 0.000002;
const OUTPUT_PRICE = 0.00001;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const chatLine = (id: string, model = 'priced') =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: `hello ${id}` }] },
  });

describe.each(await availableBackends())('batch items as governed calls on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeOpenAiServer;
  let refusing: FakeOpenAiServer;
  let failing: FakeOpenAiServer;
  const clock = new ManualClock(Date.parse('2026-11-23T12:00:10Z'));

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await FakeOpenAiServer.start();
    refusing = await FakeOpenAiServer.start();
    refusing.defaultScenario = { kind: 'error', status: 400, message: 'the upstream refuses this request' };
    failing = await FakeOpenAiServer.start();
    failing.defaultScenario = { kind: 'error', status: 500, message: 'the upstream is broken' };
    gateway = await startTestGateway({
      backend,
      batches: true,
      clock,
      yaml: `
model_list:
  - model_name: priced
    params: { provider: openai, model: up, api_base: "${upstream.baseUrl}", api_key: sk-upstream }
    model_info: { id: priced-1, input_cost_per_token: ${INPUT_PRICE}, output_cost_per_token: ${OUTPUT_PRICE} }
  - model_name: refusing
    params: { provider: openai, model: up, api_base: "${refusing.baseUrl}", api_key: sk-upstream }
    model_info: { id: refusing-1, input_cost_per_token: ${INPUT_PRICE}, output_cost_per_token: ${OUTPUT_PRICE} }
  - model_name: failing
    params: { provider: openai, model: up, api_base: "${failing.baseUrl}", api_key: sk-upstream }
    model_info: { id: failing-1, input_cost_per_token: ${INPUT_PRICE}, output_cost_per_token: ${OUTPUT_PRICE} }
`,
    });
    const team = await gateway.admin('POST', '/ui/api/teams', { team_id: 'batch-team' });
    expect(team.status).toBe(201);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await refusing?.close();
    await failing?.close();
    await backend?.cleanup();
  });

  async function newKey(body: Record<string, unknown>) {
    const created = await gateway.admin('POST', '/ui/api/keys', body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const secret = created.body.key as string;
    return {
      secret,
      keyId: created.body.key_id as string,
      client: new OpenAI({ apiKey: secret, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 }),
    };
  }

  async function runBatch(client: OpenAI, lines: string[]) {
    const file = await client.files.create({
      file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'in.jsonl'),
      purpose: 'batch',
    });
    return client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
  }

  const items = (batchId: string) =>
    gateway.gateway.database.db
      .selectFrom('batch_items')
      .select(['line_index', 'status', 'attempts', 'not_before'])
      .where('batch_id', '=', batchId)
      .orderBy('line_index')
      .execute();

  const lines = async (client: OpenAI, fileId: string | null | undefined) =>
    fileId
      ? (await (await client.files.content(fileId)).text())
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line))
      : [];

  /** The batch row as the worker left it, read without calling the API (which counts against the key). */
  const batchRow = (batchId: string) =>
    gateway.gateway.database.db
      .selectFrom('batches')
      .select(['status', 'total', 'completed', 'failed', 'output_file_id', 'error_file_id'])
      .where('id', '=', batchId)
      .executeTakeFirstOrThrow();

  it("counts items against the key's rpm: past the limit they wait, the key's own calls are refused, and all complete as the window moves", async () => {
    const { client } = await newKey({ rpm_limit: 2 });
    // The upload and the batch creation are two calls of the key (issue 25): they spend this window.
    const created = await runBatch(
      client,
      ['a', 'b', 'c', 'd', 'e'].map((id) => chatLine(id)),
    );
    const waiting = async (completed: number) => {
      const batch = await until(
        () => batchRow(created.id),
        (current) => Number(current.completed) === completed,
      );
      // The rest were refused by the limit and wait for the window: pending, not failed, due later.
      await until(
        () => items(created.id),
        (rows) => {
          const pending = rows.filter((row) => row.status === 'pending');
          return (
            pending.length === 5 - completed && pending.every((row) => Number(row.not_before) > clock.now())
          );
        },
      );
      expect([Number(batch.total), Number(batch.completed), Number(batch.failed)]).toEqual([5, completed, 0]);
      // The window is spent: the key's synchronous call is limited exactly as the items were.
      await expect(
        client.chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'now' }] }),
      ).rejects.toMatchObject({ status: 429, code: 'key_rpm_exceeded' });
    };
    await waiting(0);
    clock.advance(61_000);
    await waiting(2);
    clock.advance(61_000);
    await waiting(4);
    clock.advance(61_000);
    const batch = await until(
      () => batchRow(created.id),
      (current) => current.status === 'completed',
    );
    expect([Number(batch.total), Number(batch.completed), Number(batch.failed)]).toEqual([5, 5, 0]);
    expect(batch.error_file_id).toBeNull();
    const output = await lines(client, batch.output_file_id);
    expect(output.map((line) => line.custom_id)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('leaves one spend record per item with the owner, model and usage; a refused item costs what its attempt cost; the totals add up', async () => {
    clock.advance(3_600_000);
    const { client, keyId } = await newKey({ team_id: 'batch-team' });
    const created = await runBatch(client, [
      chatLine('p0'),
      chatLine('p1'),
      chatLine('x0', 'refusing'),
      chatLine('p2'),
    ]);
    const batch = await until(
      () => client.batches.retrieve(created.id),
      (current) => current.status === 'completed',
    );
    expect(batch.request_counts).toEqual({ total: 4, completed: 3, failed: 1 });
    const answered = new Map(
      [...(await lines(client, batch.output_file_id)), ...(await lines(client, batch.error_file_id))].map(
        (line) => [line.response.request_id as string, line],
      ),
    );
    const rows = (await until(
      () =>
        gateway.gateway.database.db
          .selectFrom('spend_logs')
          .selectAll()
          .where('key_id', '=', keyId)
          .execute(),
      (found) => found.length >= 4,
    )) as Array<Record<string, any>>;
    expect(rows).toHaveLength(4);
    // One record per item, under the request id of its output or error line.
    expect(rows.map((row) => row.request_id).sort()).toEqual([...answered.keys()].sort());
    for (const row of rows) {
      const line = answered.get(row.request_id)!;
      const model = line.custom_id.startsWith('x') ? 'refusing' : 'priced';
      expect(row).toMatchObject({
        key_id: keyId,
        team_id: 'batch-team',
        model,
        endpoint: '/v1/chat/completions',
      });
      expect(Number(row.status)).toBe(line.response.status_code);
      if (model === 'priced') {
        const usage = line.response.body.usage;
        expect([Number(row.prompt_tokens), Number(row.completion_tokens)]).toEqual([
          usage.prompt_tokens,
          usage.completion_tokens,
        ]);
        expect(Number(row.cost)).toBeCloseTo(
          usage.prompt_tokens * INPUT_PRICE + usage.completion_tokens * OUTPUT_PRICE,
          12,
        );
      } else {
        // The upstream refused and reported no usage: the item is charged nothing.
        expect(Number(row.status)).toBe(400);
        expect(Number(row.cost ?? 0)).toBe(0);
        expect(Number(row.completion_tokens ?? 0)).toBe(0);
      }
    }
    const sum = (field: string) => rows.reduce((total, row) => total + Number(row[field] ?? 0), 0);
    const daily = await until(
      () =>
        gateway.gateway.database.db
          .selectFrom('spend_daily')
          .select((eb) => [
            eb.fn.sum<number>('requests').as('requests'),
            eb.fn.sum<number>('failed_requests').as('failed'),
            eb.fn.sum<number>('prompt_tokens').as('prompt'),
            eb.fn.sum<number>('completion_tokens').as('completion'),
            eb.fn.sum<number>('cost').as('cost'),
          ])
          .where('scope_type', '=', 'key')
          .where('scope_id', '=', keyId)
          .executeTakeFirstOrThrow(),
      (totals) => Number(totals.requests) === 4,
    );
    expect(Number(daily.failed)).toBe(1);
    expect([Number(daily.prompt), Number(daily.completion)]).toEqual([
      sum('prompt_tokens'),
      sum('completion_tokens'),
    ]);
    expect(Number(daily.cost)).toBeCloseTo(sum('cost'), 12);
    expect(sum('cost')).toBeGreaterThan(0);
  });

  it('charges an item the worker retries after upstream failures nothing, one record per attempt', async () => {
    clock.advance(3_600_000);
    const { client, keyId } = await newKey({});
    const created = await runBatch(client, [chatLine('f0', 'failing')]);
    // Each worker attempt waits for its backoff on the injected clock; move it until the item gives up.
    const batch = await until(
      async () => {
        clock.advance(70_000);
        return client.batches.retrieve(created.id);
      },
      (current) => current.status === 'completed',
    );
    expect(batch.request_counts).toEqual({ total: 1, completed: 0, failed: 1 });
    const [item] = await items(created.id);
    const rows = await until(
      () =>
        gateway.gateway.database.db
          .selectFrom('spend_logs')
          .selectAll()
          .where('key_id', '=', keyId)
          .execute(),
      (found) => found.length >= Number(item!.attempts),
    );
    expect(Number(item!.attempts)).toBeGreaterThan(1);
    expect(rows).toHaveLength(Number(item!.attempts));
    for (const row of rows) {
      expect(row).toMatchObject({ model: 'failing', key_id: keyId });
      expect(Number(row.status)).toBeGreaterThanOrEqual(500);
      expect(Number(row.cost ?? 0)).toBe(0);
    }
  });
});
