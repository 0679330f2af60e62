/**
 * Budgets are reserved (issue 25): each admission holds the request's estimated cost (prompt estimate
 * at the input price + max_tokens, or general_settings.budget_reservation_default_max_tokens, at the
 * output price) on the caller's budgets in the admission round trip, so concurrent requests cannot
 * spend past max_budget by concurrency × cost; settlement replaces the reservation by the real cost.
 * Driven through the HTTP API with the openai client, on both backends.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

// Every answer is ten words (ten completion tokens) at $0.02 each: $0.20 a request; prompts are free.
const ANSWER = 'one two three four five six seven eight nine ten';
const models = `
model_list:
  - model_name: priced
    params: { provider: fake, model: priced, latency_ms: 400, response: "${ANSWER}" }
    model_info: { id: priced-1, input_cost_per_token: 0, output_cost_per_token: 0.02 }
  - model_name: quick
    params: { provider: fake, model: quick, response: "${ANSWER}" }
    model_info: { id: quick-1, input_cost_per_token: 0, output_cost_per_token: 0.02 }
`;
const REQUESTS = 30;
const COST = 0.2;
const BUDGET = 1;

describe.each(await availableBackends())('budget reservations on %s', (_name, makeBackend) => {
  const gateways: TestGateway[] = [];
  const backends: Backend[] = [];

  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    for (const backend of backends) await backend.cleanup();
  });

  async function gatewayWith(generalSettings = ''): Promise<TestGateway> {
    const backend = makeBackend();
    backends.push(backend);
    const gateway = await startTestGateway({
      backend,
      yaml: models,
      generalSettings: `  budget_reconcile_interval_seconds: 0\n${generalSettings}`,
    });
    gateways.push(gateway);
    return gateway;
  }

  /** 30 concurrent chats of one key with a $1 budget; the statuses and the spend recorded afterwards. */
  async function burst(gateway: TestGateway, body: { max_tokens?: number }) {
    const created = await gateway.admin('POST', '/ui/api/keys', { max_budget: BUDGET });
    const client = new OpenAI({ apiKey: created.body.key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    const outcomes = await Promise.all(
      Array.from({ length: REQUESTS }, () =>
        client.chat.completions
          .create({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], ...body })
          .then(
            () => ({ status: 200, code: undefined as string | undefined }),
            (error: InstanceType<typeof OpenAI.APIError>) => ({
              status: error.status,
              code: error.code ?? undefined,
            }),
          ),
      ),
    );
    const served = outcomes.filter((outcome) => outcome.status === 200).length;
    const refused = outcomes.filter((outcome) => outcome.code === 'key_budget_exceeded').length;
    return { served, refused, client, keyId: created.body.key_id as string };
  }

  describe('with max_tokens on each request', () => {
    let gateway: TestGateway;
    beforeAll(async () => {
      gateway = await gatewayWith();
    });

    it('runs at most max_budget / cost of 30 concurrent $0.20 requests on a $1 budget', async () => {
      const { served, refused, client } = await burst(gateway, { max_tokens: 10 });
      expect(served).toBe(Math.ceil(BUDGET / COST));
      expect(refused).toBe(REQUESTS - served);
      // Settled: the reservations became the real cost ($1.00 spent), so the budget stays closed.
      const next = await client.chat.completions
        .create({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 })
        .catch((error: InstanceType<typeof OpenAI.APIError>) => error);
      expect(next).toMatchObject({ status: 429, code: 'key_budget_exceeded' });
      expect((next as Error).message).toContain('spent $1 of max_budget $1');
    });

    it('a request that would not fit is told what it may cost and that a lower max_tokens reserves less', async () => {
      const created = await gateway.admin('POST', '/ui/api/keys', { max_budget: 0.5 });
      const client = new OpenAI({
        apiKey: created.body.key,
        baseURL: `${gateway.baseUrl}/v1`,
        maxRetries: 0,
      });
      const tooBig = await client.chat.completions
        .create({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 30 })
        .catch((error: InstanceType<typeof OpenAI.APIError>) => error);
      expect(tooBig).toMatchObject({ status: 429, code: 'key_budget_exceeded', param: 'key_budget' });
      expect((tooBig as Error).message).toContain('may cost up to $0.6');
      // The same request with a max_tokens that fits is served: nothing was held by the refusal.
      await expect(
        client.chat.completions.create({
          model: 'priced',
          messages: [{ role: 'user', content: 'hi' }],
          max_tokens: 10,
        }),
      ).resolves.toBeDefined();
    });
  });

  it('reserves in the one admission round trip and gives back in the one settlement: no extra round trip', async () => {
    const gateway = await gatewayWith();
    const store = gateway.gateway.store;
    const admits = vi.spyOn(store, 'admit');
    const settles = vi.spyOn(store, 'settle');
    const created = await gateway.admin('POST', '/ui/api/keys', { max_budget: BUDGET });
    const client = new OpenAI({ apiKey: created.body.key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    await client.chat.completions.create({
      model: 'quick',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 10,
    });
    await vi.waitFor(() => expect(settles).toHaveBeenCalled(), { timeout: 5_000, interval: 5 });
    expect(admits).toHaveBeenCalledTimes(1);
    expect(admits.mock.calls[0]![0].reservation).toMatchObject({ amount: COST * 1_000_000 });
    expect(settles).toHaveBeenCalledTimes(1);
    expect(settles.mock.calls[0]![0]).toMatchObject({
      budgets: [expect.objectContaining({ amount: COST * 1_000_000 })],
      release: { reservations: [expect.objectContaining({ amount: COST * 1_000_000 })] },
    });
  });

  describe('budget_reservation_default_max_tokens', () => {
    it('reserves a request without max_tokens for the configured default: 10 tokens ($0.20) lets 5 of 30 run', async () => {
      const gateway = await gatewayWith('  budget_reservation_default_max_tokens: 10\n');
      expect(await burst(gateway, {})).toMatchObject({ served: 5, refused: REQUESTS - 5 });
    });

    // One request at a time, so the rule does not depend on how many of a burst overlap on a loaded
    // machine: a $0.10 budget is below one answer's real cost ($0.20).
    it('with 0, a request without max_tokens reserves only its prompt (free here): it fits a budget below its answer', async () => {
      const gateway = await gatewayWith('  budget_reservation_default_max_tokens: 0\n');
      const admits = vi.spyOn(gateway.gateway.store, 'admit');
      const created = await gateway.admin('POST', '/ui/api/keys', { max_budget: 0.1 });
      const client = new OpenAI({
        apiKey: created.body.key,
        baseURL: `${gateway.baseUrl}/v1`,
        maxRetries: 0,
      });
      await expect(
        client.chat.completions.create({ model: 'quick', messages: [{ role: 'user', content: 'hi' }] }),
      ).resolves.toBeDefined();
      expect(admits.mock.calls.at(-1)![0].reservation?.amount ?? 0).toBe(0);
    });

    it('with 10, the same request reserves $0.20 and does not fit that budget', async () => {
      const gateway = await gatewayWith('  budget_reservation_default_max_tokens: 10\n');
      const created = await gateway.admin('POST', '/ui/api/keys', { max_budget: 0.1 });
      const client = new OpenAI({
        apiKey: created.body.key,
        baseURL: `${gateway.baseUrl}/v1`,
        maxRetries: 0,
      });
      const refused = await client.chat.completions
        .create({ model: 'quick', messages: [{ role: 'user', content: 'hi' }] })
        .catch((error: InstanceType<typeof OpenAI.APIError>) => error);
      expect(refused).toMatchObject({ status: 429, code: 'key_budget_exceeded' });
    });

    it('by default (4096 tokens, $81.92 here) a request without max_tokens does not fit a $1 budget', async () => {
      const gateway = await gatewayWith();
      const { served, refused } = await burst(gateway, {});
      expect({ served, refused }).toEqual({ served: 0, refused: REQUESTS });
    });
  });
});
