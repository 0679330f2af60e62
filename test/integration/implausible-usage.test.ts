/**
 * Issue 25: an upstream's usage report is never charged as it is when it cannot be true. 10^15 tokens
 * were charged as $2×10^11; now each count above the call's bound (model_info max_input_tokens +
 * max_output_tokens, else 10^7) is charged the bound, a negative one 0, a fraction rounded up, and a
 * report with counts that are not numbers is charged the gateway's estimate, marked estimated. Each is
 * counted in gateway_implausible_usage_total{reason}. Driven with the openai SDK against the fake
 * OpenAI upstream reporting the usage under test.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const INPUT = 0.000001;
const OUTPUT = 0.000002;

describe.each(await availableBackends())('implausible upstream usage on %s', (_name, makeBackend) => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let gateway: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await FakeOpenAiServer.start();
    const prices = `input_cost_per_token: ${INPUT}, output_cost_per_token: ${OUTPUT}`;
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: windowed
    params: { provider: openai, model: up, api_base: "${upstream.baseUrl}" }
    model_info: { id: windowed-1, ${prices}, max_input_tokens: 1000, max_output_tokens: 100 }
  - model_name: open
    params: { provider: openai, model: up, api_base: "${upstream.baseUrl}" }
    model_info: { id: open-1, ${prices} }
`,
      generalSettings: '  budget_reconcile_interval_seconds: 0\n',
    });
    client = new OpenAI({
      apiKey: await gateway.createKey(),
      baseURL: `${gateway.baseUrl}/v1`,
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(() => upstream.reset());

  async function spendRow(requestId: string) {
    for (let wait = 0; wait < 300; wait++) {
      const rows = await gateway.gateway.database.db
        .selectFrom('spend_logs')
        .selectAll()
        .where('request_id', '=', requestId)
        .execute();
      if (rows.length === 1) {
        const row = rows[0]!;
        return {
          prompt: Number(row.prompt_tokens),
          completion: Number(row.completion_tokens),
          cost: Number(row.cost),
          known: row.usage_known,
          estimated: row.usage_estimated,
        };
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no spend row for ${requestId}`);
  }

  async function ask(model: string, usage: Record<string, unknown>, target = client) {
    upstream.enqueue({ kind: 'answer', text: 'fine', usage });
    const { response } = await target.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    return spendRow(response.headers.get('x-request-id')!);
  }

  const metric = async (reason: string) => {
    const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((entry) => entry.startsWith(`gateway_implausible_usage_total{reason="${reason}"}`));
    return Number(line?.split(' ')[1] ?? 0);
  };

  it("clamps counts above the bound to the model's window (max_input_tokens + max_output_tokens), and counts it", async () => {
    const before = await metric('above_bound');
    const row = await ask('windowed', { prompt_tokens: 1e15, completion_tokens: 1e15, total_tokens: 2e15 });
    expect(row).toMatchObject({ prompt: 1100, completion: 1100, known: 1, estimated: 0 });
    expect(row.cost).toBeCloseTo(1100 * INPUT + 1100 * OUTPUT, 12);
    expect(await metric('above_bound')).toBe(before + 1);
  });

  it('clamps to 10^7 tokens per call when the window is not configured, and the budget is not wrecked', async () => {
    const limited = new OpenAI({
      apiKey: await gateway.createKey({ max_budget: 100 }),
      baseURL: `${gateway.baseUrl}/v1`,
      maxRetries: 0,
    });
    const row = await ask('open', { prompt_tokens: 1e15, completion_tokens: 5 }, limited);
    expect(row).toMatchObject({ prompt: 10_000_000, completion: 5 });
    expect(row.cost).toBeCloseTo(10_000_000 * INPUT + 5 * OUTPUT, 9);
    // $10 charged, not $10^9: the key's $100 budget still admits the next call.
    expect((await ask('open', { prompt_tokens: 1, completion_tokens: 1 }, limited)).prompt).toBe(1);
  });

  it('charges a negative count as 0 and a fraction rounded up, and counts each', async () => {
    const negativeBefore = await metric('negative');
    const fractionBefore = await metric('not_integer');
    expect(await ask('open', { prompt_tokens: -50, completion_tokens: 5, total_tokens: -45 })).toMatchObject({
      prompt: 0,
      completion: 5,
      known: 1,
    });
    expect(await ask('open', { prompt_tokens: 2.5, completion_tokens: 3.2 })).toMatchObject({
      prompt: 3,
      completion: 4,
    });
    expect(await metric('negative')).toBe(negativeBefore + 1);
    expect(await metric('not_integer')).toBe(fractionBefore + 1);
  });

  it('charges an estimate, marked estimated, for counts that are not numbers (NaN-like strings)', async () => {
    const before = await metric('unreadable');
    const row = await ask('open', {
      prompt_tokens: 'NaN',
      completion_tokens: '1e400',
      total_tokens: 'Infinity',
    });
    // The prompt as admission estimates it (body bytes / 4), the answer's text ("fine") as 1 token.
    expect(row).toMatchObject({ completion: 1, known: 0, estimated: 1 });
    expect(row.prompt).toBeGreaterThan(0);
    expect(row.cost).toBeCloseTo(row.prompt * INPUT + OUTPUT, 12);
    expect(await metric('unreadable')).toBe(before + 1);
  });

  it('clamps a streamed usage report the same way', async () => {
    upstream.enqueue({ kind: 'answer', text: 'fine', usage: { prompt_tokens: 1e15, completion_tokens: 7 } });
    const { data, response } = await client.chat.completions
      .create({ model: 'windowed', stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    for await (const _chunk of data) {
      // read to the end
    }
    const row = await spendRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ prompt: 1100, completion: 7, known: 1 });
  });
});
