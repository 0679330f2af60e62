/**
 * Issue 25: a caller who reads a stream up to its finish_reason chunk and closes the socket no longer
 * skips the bill. The gateway reads on, unseen, for the upstream's usage event (the drain, 3 s) and
 * charges it exactly; when it never comes the call is charged an estimate, marked `usage_estimated` in
 * the spend record, the spend API and its CSV export. Either way the budget then refuses. The same holds
 * for the model turn an MCP tool loop was running. Driven with the openai SDK and an AbortController
 * against the fake OpenAI upstream, which sends usage last.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { bind, createKey, registerServer } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

/** Polls `read` until `done` (a generous bound: the machine is shared). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(await availableBackends())('a stream the caller left, on %s', (_name, makeBackend) => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let gateway: TestGateway;
  let tools: FakeMcpServer;

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await FakeOpenAiServer.start();
    tools = await startFakeMcpServer({ mode: 'stateful' });
    // Four words answer four completion tokens: $0.20 each, the prompt free.
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: billed
    params: { provider: openai, model: up, api_base: "${upstream.baseUrl}" }
    model_info: { id: billed-1, input_cost_per_token: 0, output_cost_per_token: 0.05 }
`,
      // No reservation beyond max_tokens: these tests pin what a cut stream is charged, not admission.
      generalSettings: '  budget_reconcile_interval_seconds: 0\n  budget_reservation_default_max_tokens: 0\n',
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await tools?.close();
    await backend?.cleanup();
  });
  beforeEach(() => upstream.reset());

  const clientOf = (apiKey: string) =>
    new OpenAI({ apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });

  /** Reads the stream up to the finish_reason chunk, then closes the connection; the request id. */
  async function readToFinishAndLeave(client: OpenAI, extra: object = {}): Promise<string> {
    const controller = new AbortController();
    const { data, response } = await client.chat.completions
      .create(
        {
          model: 'billed',
          stream: true,
          messages: [{ role: 'user', content: 'count to four' }],
          ...extra,
        },
        { signal: controller.signal },
      )
      .withResponse();
    let text = '';
    for await (const chunk of data) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) break;
    }
    controller.abort();
    expect(text).toBe('one two three four');
    return response.headers.get('x-request-id')!;
  }

  const spendRow = (requestId: string) =>
    until(
      () =>
        gateway.gateway.database.db
          .selectFrom('spend_logs')
          .selectAll()
          .where('request_id', '=', requestId)
          .execute(),
      (rows) => rows.length === 1,
    ).then((rows) => ({ ...rows[0]!, cost: rows[0]!.cost === null ? null : Number(rows[0]!.cost) }));

  const chat = (client: OpenAI) =>
    client.chat.completions.create({ model: 'billed', messages: [{ role: 'user', content: 'again' }] });

  it('charges the usage event that comes after the caller left, exactly, and the budget then refuses', async () => {
    const client = clientOf(await gateway.createKey({ max_budget: 0.5 }));
    upstream.defaultScenario = { kind: 'answer', text: 'one two three four', usageDelayMs: 300 };
    for (let index = 0; index < 3; index++) {
      const row = await spendRow(await readToFinishAndLeave(client));
      expect(row).toMatchObject({ status: 499, usage_known: 1, usage_estimated: 0, completion_tokens: 4 });
      expect(row.cost).toBeCloseTo(0.2, 10);
    }
    // The caller's disconnect did not cut the upstream call: each answer was read to its end.
    expect(upstream.requests.map((request) => request.aborted)).toEqual([false, false, false]);
    await expect(chat(client)).rejects.toMatchObject({ status: 429, code: 'key_budget_exceeded' });
  });

  it('charges an estimate when the usage event never comes, marks it estimated, and the budget then refuses', async () => {
    // max_tokens 5 reserves $0.25 at admission: the whole budget, which the estimate then spends.
    const key = await gateway.createKey({ max_budget: 0.25 });
    const client = clientOf(key);
    upstream.defaultScenario = { kind: 'answer', text: 'one two three four', withholdUsage: true };
    // Six chunks were read (role, four words, finish): the estimate's completion, capped at max_tokens.
    const requestId = await readToFinishAndLeave(client, { max_tokens: 5 });
    const row = await spendRow(requestId);
    expect(row).toMatchObject({ status: 499, usage_known: 0, usage_estimated: 1, completion_tokens: 5 });
    expect(row.prompt_tokens).toBeGreaterThan(0);
    expect(row.cost).toBeCloseTo(0.25, 10);
    // The upstream call was stopped at the drain's end, not left open.
    await until(
      async () => upstream.requests[0]?.aborted,
      (aborted) => aborted === true,
    );
    await expect(chat(client)).rejects.toMatchObject({ status: 429, code: 'key_budget_exceeded' });

    const logs = await gateway.admin('GET', `/ui/api/spend/logs?key_id=${row.key_id}`);
    expect(logs.body.data).toEqual([
      expect.objectContaining({ request_id: requestId, usage_known: false, usage_estimated: true }),
    ]);
    const csv = await (
      await fetch(`${gateway.baseUrl}/ui/api/spend/logs/export?key_id=${row.key_id}`, {
        headers: { authorization: `Bearer ${gateway.masterKey}` },
      })
    ).text();
    const [header, line] = csv.trim().split(/\r?\n/);
    const columns = header!.split(',');
    expect(line!.split(',')[columns.indexOf('usage_estimated')]).toBe('true');
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/gateway_estimated_charges_total\{reason="caller_left"\} [1-9]/);
  });

  it('charges the completions, Responses and Messages streams a caller closed the same way', async () => {
    const key = await gateway.createKey();
    upstream.defaultScenario = { kind: 'answer', text: 'one two three four', usageDelayMs: 300 };
    const bodies = {
      '/v1/completions': { model: 'billed', prompt: 'count to four', stream: true },
      '/v1/responses': { model: 'billed', input: 'count to four', stream: true },
      '/v1/messages': {
        model: 'billed',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'count to four' }],
        stream: true,
      },
    };
    for (const [path, body] of Object.entries(bodies)) {
      // A raw client: read until the last word arrived, then close the socket.
      const controller = new AbortController();
      const response = await fetch(`${gateway.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      let text = '';
      while (!text.includes('four')) text += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      const row = await spendRow(response.headers.get('x-request-id')!);
      expect(row, path).toMatchObject({
        status: 499,
        usage_known: 1,
        usage_estimated: 0,
        completion_tokens: 4,
      });
    }
  });

  describe('in an MCP tool loop', () => {
    const prompt = (index: number) =>
      Math.ceil(JSON.stringify(upstream.requests[index]!.body.messages).length / 4);

    /** Turn 1 asks for alpha.echo; the caller leaves once turn 2 reached the upstream. */
    async function leaveDuringSecondTurn(): Promise<string> {
      const { key, keyId } = await createKey(gateway);
      await bind(gateway, {
        server_id: serverId,
        scope_type: 'api_key',
        scope_id: keyId,
        tool_allowlist: ['echo'],
      });
      const controller = new AbortController();
      const pending = clientOf(key)
        .chat.completions.create(
          {
            model: 'billed',
            messages: [{ role: 'user', content: 'use the tool' }],
            tools: [{ type: 'mcp', server: 'alpha', require_approval: 'never' } as never],
          },
          { signal: controller.signal },
        )
        .catch(() => undefined);
      await until(
        async () => upstream.requests.length,
        (count) => count === 2,
      );
      controller.abort();
      await pending;
      return keyId;
    }

    const rowOfKey = (keyId: string) =>
      until(
        () =>
          gateway.gateway.database.db
            .selectFrom('spend_logs')
            .selectAll()
            .where('key_id', '=', keyId)
            .execute(),
        (rows) => rows.length === 1,
      ).then((rows) => rows[0]!);

    let serverId: string;
    beforeAll(async () => {
      serverId = (await registerServer(gateway, { server_key: 'alpha', base_url: tools.url })).server_id;
    });

    it('charges the turn that was running when the caller left, from its own usage', async () => {
      upstream.enqueue(
        { kind: 'answer', toolCalls: [{ name: 'alpha__echo', arguments: '{"text":"hi"}' }] },
        { kind: 'answer', text: 'done', firstByteDelayMs: 500 },
      );
      const row = await rowOfKey(await leaveDuringSecondTurn());
      expect(row).toMatchObject({ status: 499, usage_known: 1, usage_estimated: 0 });
      expect(Number(row.prompt_tokens)).toBe(prompt(0) + prompt(1));
      expect(upstream.requests[1]!.aborted).toBe(false);
    });

    it('charges an estimate for a turn that never answered within the drain', async () => {
      upstream.enqueue(
        { kind: 'answer', toolCalls: [{ name: 'alpha__echo', arguments: '{"text":"hi"}' }] },
        { kind: 'hang' },
      );
      const row = await rowOfKey(await leaveDuringSecondTurn());
      expect(row).toMatchObject({ status: 499, usage_known: 0, usage_estimated: 1 });
      // Turn 1 as reported, turn 2's prompt as estimated (its body / 4): more than turn 1 alone.
      expect(Number(row.prompt_tokens)).toBeGreaterThan(prompt(0));
      await until(
        async () => upstream.requests[1]!.aborted,
        (aborted) => aborted,
      );
    });
  });
});
