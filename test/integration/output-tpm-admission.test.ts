/**
 * Output-token governance over HTTP (issue 14; spec: Limits > Output tokens per minute, rules 1-9 and
 * the output headers) on PostgreSQL + Redis with the store's clock injected. The fake upstream answers
 * with as many completion tokens as its answer has words, so `words(n)` produces n output tokens.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, postgresBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

const at = (iso: string) => Date.parse(iso);
const words = (count: number) => 'w '.repeat(count).trim();
const unixSeconds = (iso: string) => String(at(iso) / 1000);

describe.runIf(await realBackendsAvailable())('output-token limits over HTTP', () => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let other: FakeOpenAiServer;
  let gateway: TestGateway;
  const clock = new ManualClock(at('2026-11-23T12:00:00Z'));

  beforeAll(async () => {
    backend = postgresBackend();
    upstream = await FakeOpenAiServer.start();
    other = await FakeOpenAiServer.start();
    const deployment = (name: string, fake: FakeOpenAiServer, extra = '') =>
      `  - { model_name: ${name}, params: { provider: openai, model: up, api_base: "${fake.baseUrl}", api_key: sk-x${extra} }, model_info: { id: ${name}-1 } }\n`;
    gateway = await startTestGateway({
      backend,
      clock,
      generalSettings: '  redis_degraded_mode: fail_closed\n',
      yaml: `model_list:
${deployment('chat', upstream)}${deployment('chat-b', upstream)}${deployment('primary', other)}${deployment('backup', upstream)}${deployment('hasty', upstream, ', timeout: 0.3')}${deployment('narrow', upstream, ', max_connections: 1, timeout: 5')}  - { model_name: demo-embedding, params: { provider: fake, model: demo-embedding }, model_info: { id: emb-1, mode: embedding } }

router_settings:
  num_retries: 0
  pool_timeout: 0.2
  fallbacks: [{ primary: [backup] }]
`,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await other?.close();
    await backend?.cleanup();
  });
  beforeEach(() => {
    upstream.reset();
    other.reset();
  });

  const chat = (key: string, model = 'chat', body: object = {}, signal?: AbortSignal) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...body }),
      ...(signal ? { signal } : {}),
    });
  const answer = (count: number) => upstream.enqueue({ kind: 'answer', text: words(count) });

  async function expectOutputRejection(response: Response, param: string): Promise<void> {
    expect(response.status).toBe(429);
    expect(((await response.json()) as any).error).toMatchObject({
      type: 'rate_limit_error',
      param,
      code: `${param}_exceeded`,
    });
  }

  async function expectUnknown(response: Response): Promise<void> {
    expect(response.status).toBe(503);
    expect(((await response.json()) as any).error.code).toBe('output_tpm_usage_unknown');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  }

  it('the worked example: limit 1000, recorded 900, a call producing 300 is admitted and records 1200, the next is denied until the minute resets (rule 3)', async () => {
    clock.set(at('2026-11-23T12:00:05Z'));
    const key = await gateway.createKey({ output_tpm_limit: 1000 });
    answer(900);
    const first = await chat(key);
    expect(first.status).toBe(200);
    // A JSON answer reflects final accounting.
    expect(first.headers.get('x-ratelimit-remaining-output-tokens')).toBe('100');
    answer(300);
    const second = await chat(key);
    expect(second.status).toBe(200);
    expect(second.headers.get('x-ratelimit-limit-output-tokens')).toBe('1000');
    expect(second.headers.get('x-ratelimit-remaining-output-tokens')).toBe('0');
    expect(second.headers.get('x-ratelimit-reset-output-tokens')).toBe(unixSeconds('2026-11-23T12:01:00Z'));
    expect(second.headers.get('x-gateway-ratelimit-output-scope')).toBe('key_output_tpm');
    clock.set(at('2026-11-23T12:00:20Z'));
    const denied = await chat(key);
    await expectOutputRejection(denied, 'key_output_tpm');
    expect(denied.headers.get('retry-after')).toBe('40');
    expect(upstream.requests).toHaveLength(2);
    clock.set(at('2026-11-23T12:01:00Z'));
    answer(1);
    expect((await chat(key)).status).toBe(200);
  });

  it('charges the minute of the store clock when output is recorded, not when the call was admitted (rule 4)', async () => {
    clock.set(at('2026-11-23T12:10:59.900Z'));
    const key = await gateway.createKey({ output_tpm_limit: 100 });
    upstream.enqueue({ kind: 'answer', text: words(150), firstByteDelayMs: 150 });
    const pending = chat(key);
    while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    clock.set(at('2026-11-23T12:11:00.100Z'));
    expect((await pending).status).toBe(200);
    await expectOutputRejection(await chat(key), 'key_output_tpm');
    // The minute the call was admitted in kept nothing.
    clock.set(at('2026-11-23T12:10:59.950Z'));
    answer(1);
    expect((await chat(key)).status).toBe(200);
  });

  it('shares a team limit across its keys, and a key without a limit cannot remove it (rule 1, 2)', async () => {
    clock.set(at('2026-11-23T12:20:00Z'));
    const team = await gateway.admin('POST', '/ui/api/teams', { output_tpm_limit: 100 });
    expect(team.status).toBe(201);
    const first = await gateway.createKey({ team_id: team.body.team_id, output_tpm_limit: null });
    const second = await gateway.createKey({ team_id: team.body.team_id });
    answer(120);
    expect((await chat(first)).status).toBe(200);
    await expectOutputRejection(await chat(second), 'team_output_tpm');
  });

  it('applies a per-model map to its exact caller-facing model only (rule 7, 9)', async () => {
    clock.set(at('2026-11-23T12:30:00Z'));
    const key = await gateway.createKey({ model_output_tpm_limit: { chat: 100 } });
    answer(150);
    const first = await chat(key);
    expect(first.headers.get('x-gateway-ratelimit-output-scope')).toBe('key_model_output_tpm');
    await expectOutputRejection(await chat(key), 'key_model_output_tpm');
    answer(1);
    const otherModel = await chat(key, 'chat-b');
    expect(otherModel.status).toBe(200);
    expect(otherModel.headers.get('x-ratelimit-limit-output-tokens')).toBeNull();
  });

  it('charges a fallback to the caller-facing model that was requested (rule 9)', async () => {
    clock.set(at('2026-11-23T12:40:00Z'));
    const key = await gateway.createKey({ model_output_tpm_limit: { primary: 100 } });
    other.enqueue({ kind: 'error', status: 500 });
    answer(150);
    const served = await chat(key, 'primary');
    expect(served.status).toBe(200);
    expect(served.headers.get('x-switchboard-deployment')).toBe('backup-1');
    await expectOutputRejection(await chat(key, 'primary'), 'key_model_output_tpm');
  });

  it('a stream records its output when it ends; its headers keep the admission snapshot (rule 5, headers)', async () => {
    clock.set(at('2026-11-23T12:50:00Z'));
    const key = await gateway.createKey({ output_tpm_limit: 100 });
    answer(150);
    const stream = await chat(key, 'chat', { stream: true });
    expect(stream.headers.get('x-ratelimit-remaining-output-tokens')).toBe('100');
    expect(await stream.text()).toContain('[DONE]');
    await expectOutputRejection(await chat(key), 'key_output_tpm');
  });

  it('a JSON answer with zero output keeps the admission snapshot and writes nothing (rule 5)', async () => {
    clock.set(at('2026-11-23T13:00:00Z'));
    const key = await gateway.createKey({ output_tpm_limit: 100 });
    upstream.enqueue({ kind: 'answer', text: '' });
    const empty = await chat(key);
    expect(empty.status).toBe(200);
    expect(empty.headers.get('x-ratelimit-remaining-output-tokens')).toBe('100');
  });

  it('sends no output headers without output policies, and exempts the master key (rule 2, headers)', async () => {
    clock.set(at('2026-11-23T13:10:00Z'));
    const plain = await gateway.createKey({ rpm_limit: 100 });
    answer(5);
    const response = await chat(plain);
    expect(response.status).toBe(200);
    expect([...response.headers.keys()].filter((name) => name.includes('output'))).toEqual([]);
    answer(5);
    const master = await chat(gateway.masterKey);
    expect(master.status).toBe(200);
    expect(master.headers.get('x-ratelimit-limit-output-tokens')).toBeNull();
  });

  it('excludes embeddings: admitted under an exhausted output limit, no output headers, nothing recorded (rule 2)', async () => {
    clock.set(at('2026-11-23T13:20:00Z'));
    const key = await gateway.createKey({ output_tpm_limit: 10 });
    answer(50);
    expect((await chat(key)).status).toBe(200);
    await expectOutputRejection(await chat(key), 'key_output_tpm');
    const embedding = await fetch(`${gateway.baseUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-embedding', input: 'hello' }),
    });
    expect(embedding.status).toBe(200);
    expect(embedding.headers.get('x-ratelimit-limit-output-tokens')).toBeNull();
  });

  describe('unknown usage (rule 6, States)', () => {
    it('an answer without usage is delivered, omits remaining capacity, and the next call gets 503 until the minute resets', async () => {
      clock.set(at('2026-11-23T14:00:00Z'));
      const key = await gateway.createKey({ output_tpm_limit: 1000 });
      upstream.enqueue({ kind: 'answer', text: 'some text', omitUsage: true });
      const delivered = await chat(key);
      expect(delivered.status).toBe(200);
      expect(((await delivered.json()) as any).choices[0].message.content).toBe('some text');
      expect(delivered.headers.get('x-ratelimit-limit-output-tokens')).toBe('1000');
      expect(delivered.headers.get('x-ratelimit-remaining-output-tokens')).toBeNull();
      clock.set(at('2026-11-23T14:00:45Z'));
      const refused = await chat(key);
      await expectUnknown(refused);
      expect(refused.headers.get('retry-after')).toBe('15');
      // Known charges in the same minute do not clear the marker; the boundary does.
      clock.set(at('2026-11-23T14:01:00Z'));
      answer(1);
      expect((await chat(key)).status).toBe(200);
    });

    it('a stream broken after content marks the scope unknown', async () => {
      clock.set(at('2026-11-23T14:10:00Z'));
      const key = await gateway.createKey({ output_tpm_limit: 1000 });
      upstream.enqueue({ kind: 'break-stream', chunksBeforeFailure: 2 });
      const broken = await chat(key, 'chat', { stream: true });
      expect(await broken.text()).not.toContain('[DONE]');
      await expectUnknown(await chat(key));
    });

    it("another request's unknown usage hides remaining capacity from a JSON answer on the same scope (headers)", async () => {
      clock.set(at('2026-11-23T14:15:00Z'));
      const key = await gateway.createKey({ output_tpm_limit: 1000 });
      // A is answered late; meanwhile B's stream breaks and marks the key unknown for the minute.
      upstream.enqueue({ kind: 'answer', text: words(10), firstByteDelayMs: 400 });
      upstream.enqueue({ kind: 'break-stream', chunksBeforeFailure: 2 });
      const first = chat(key);
      while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const broken = await chat(key, 'chat', { stream: true });
      expect(await broken.text()).not.toContain('[DONE]');
      await expectUnknown(await chat(key));
      const answered = await first;
      expect(answered.status).toBe(200);
      expect(answered.headers.get('x-ratelimit-limit-output-tokens')).toBe('1000');
      expect(answered.headers.get('x-ratelimit-remaining-output-tokens')).toBeNull();
    });

    it('a caller that cancels mid-stream marks the scope unknown when the stream outlasts the drain', async () => {
      clock.set(at('2026-11-23T14:20:00Z'));
      const key = await gateway.createKey({ output_tpm_limit: 1000 });
      // 5 s of chunks: the gateway reads on for the usage event for 3 s (issue 25), then stops the call.
      upstream.enqueue({ kind: 'answer', text: words(50), chunkDelayMs: 100 });
      const controller = new AbortController();
      const stream = await chat(key, 'chat', { stream: true }, controller.signal);
      const reader = stream.body!.getReader();
      await reader.read();
      controller.abort();
      await reader.read().catch(() => {});
      let status = 0;
      for (let tries = 0; tries < 200 && status !== 503; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const next = await chat(key);
        status = next.status;
        if (status === 503) await expectUnknown(next);
        else await next.text();
      }
      expect(status).toBe(503);
    });

    it('an upstream timeout after the request was sent marks the scope unknown', async () => {
      clock.set(at('2026-11-23T14:30:00Z'));
      const key = await gateway.createKey({ output_tpm_limit: 1000 });
      upstream.enqueue({ kind: 'hang' });
      const timedOut = await chat(key, 'hasty');
      expect(timedOut.status).toBeGreaterThanOrEqual(500);
      await expectUnknown(await chat(key));
    });

    it('an upstream connection-pool timeout is known zero: nothing is marked (States)', async () => {
      clock.set(at('2026-11-23T14:40:00Z'));
      const holder = await gateway.createKey();
      const key = await gateway.createKey({ output_tpm_limit: 1000 });
      upstream.enqueue({ kind: 'hang' });
      const controller = new AbortController();
      const holding = chat(holder, 'narrow', {}, controller.signal).catch(() => undefined);
      while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const waited = await chat(key, 'narrow');
      expect(waited.status).toBeGreaterThanOrEqual(500);
      expect(upstream.requests).toHaveLength(1);
      controller.abort();
      await holding;
      answer(1);
      expect((await chat(key)).status).toBe(200);
    });
  });

  it('counts events in gateway_output_tpm_events_total, a refusal for unknown usage apart from a denial', async () => {
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    for (const event of ['admitted', 'denied', 'unknown_usage', 'accounted', 'unknown'])
      expect(metrics).toMatch(new RegExp(`gateway_output_tpm_events_total\\{event="${event}"\\} [1-9]`));
  });
});
