/**
 * The response cache (issue 16), driven with the openai SDK: a repeated request is answered from the
 * cache without a provider call (JSON, and a stream replayed in its original chunks), any key field
 * that changes misses, tenants never read each other's answers, entries expire on the injected clock,
 * limits are still charged on hits and spend records the hit at cost 0; replicas sharing Redis share
 * hits; a Redis outage degrades to answering uncached.
 */
import { sql } from 'kysely';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const question = { model: 'cached', messages: [{ role: 'user' as const, content: 'What is the answer?' }] };

describe.each(await availableBackends())('response cache on %s', (name, makeBackend) => {
  const onRedis = name === 'postgres+redis';
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let clock: ManualClock;
  const gateways: TestGateway[] = [];
  let gateway: TestGateway;
  let client: OpenAI;
  let key: string;

  const start = () =>
    startTestGateway({
      backend,
      clock,
      yaml: `
model_list:
  - model_name: cached
    params: { provider: openai, model: up, api_base: "${upstream.baseUrl}" }
    model_info: { id: cached-1, input_cost_per_token: 0.000001, output_cost_per_token: 0.000002 }
`,
      generalSettings: '  response_cache: { enabled: true, ttl_seconds: 60 }\n',
    }).then((started) => {
      gateways.push(started);
      return started;
    });

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await FakeOpenAiServer.start();
    clock = new ManualClock(Date.now());
    gateway = await start();
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-a' });
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-b' });
    key = await gateway.createKey({ team_id: 'team-a' });
    client = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    for (const started of gateways) await started.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(async () => {
    upstream.reset();
    await gateway.admin('DELETE', '/ui/api/cache');
  });

  const ask = (body: object, target = client, options: { headers?: Record<string, string> } = {}) =>
    target.chat.completions.create({ ...question, ...body } as never, options).withResponse();

  it('answers a repeated request from the cache: no provider call, the same answer, x-switchboard-cache hit', async () => {
    const first = await ask({});
    expect(first.response.headers.get('x-switchboard-cache')).toBe('miss');
    const second = await ask({});
    expect(second.response.headers.get('x-switchboard-cache')).toBe('hit');
    expect(second.response.headers.get('x-switchboard-deployment')).toBe('cache');
    expect((second.data as any).choices[0].message.content).toBe(
      (first.data as any).choices[0].message.content,
    );
    expect(upstream.requests).toHaveLength(1);
  });

  it('replays a cached stream in its original chunks, ended by [DONE]', async () => {
    upstream.defaultScenario = { kind: 'answer', text: 'one two three' };
    const read = async () => {
      const { data, response } = await client.chat.completions
        .create({ ...question, stream: true, stream_options: { include_usage: true } })
        .withResponse();
      let text = '';
      let usage: unknown;
      for await (const chunk of data) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      return { text, usage, status: response.headers.get('x-switchboard-cache') };
    };
    const miss = await read();
    const hit = await read();
    expect(miss.status).toBe('miss');
    expect(hit).toEqual({ ...miss, status: 'hit' });
    expect(hit.text).toBe('one two three');
    expect(upstream.requests).toHaveLength(1);
  });

  it('misses when any key field changes', async () => {
    await ask({});
    for (const change of [
      { temperature: 0.5 },
      { top_p: 0.5 },
      { seed: 7 },
      { stop: ['x'] },
      { max_tokens: 9 },
      { max_completion_tokens: 9 },
      { response_format: { type: 'json_object' } },
      { messages: [{ role: 'user', content: 'Another question?' }] },
      { tools: [{ type: 'function', function: { name: 'f' } }] },
    ]) {
      const answer = await ask(change);
      expect(answer.response.headers.get('x-switchboard-cache'), JSON.stringify(change)).toBe('miss');
    }
    expect(upstream.requests).toHaveLength(10);
  });

  it('never serves one team the answers of another', async () => {
    await ask({});
    const otherKey = await gateway.createKey({ team_id: 'team-b' });
    const other = new OpenAI({ apiKey: otherKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    expect((await ask({}, other)).response.headers.get('x-switchboard-cache')).toBe('miss');
    const sameTeam = new OpenAI({
      apiKey: await gateway.createKey({ team_id: 'team-a' }),
      baseURL: `${gateway.baseUrl}/v1`,
      maxRetries: 0,
    });
    expect((await ask({}, sameTeam)).response.headers.get('x-switchboard-cache')).toBe('hit');
  });

  it('honours Cache-Control and the body cache object, and never sends the cache object upstream', async () => {
    await ask({});
    expect(
      (await ask({}, client, { headers: { 'cache-control': 'no-cache' } })).response.headers.get(
        'x-switchboard-cache',
      ),
    ).toBe('miss');
    expect(
      (await ask({}, client, { headers: { 'cache-control': 'no-store, no-cache' } })).response.headers.get(
        'x-switchboard-cache',
      ),
    ).toBe('bypass');
    expect((await ask({ cache: { 'no-cache': true } })).response.headers.get('x-switchboard-cache')).toBe(
      'miss',
    );
    expect(upstream.requests.every((request) => request.body.cache === undefined)).toBe(true);
    expect(upstream.requests).toHaveLength(4);
  });

  it('follows the key and team switch: cache_enabled false bypasses a cache-enabled gateway', async () => {
    const off = new OpenAI({
      apiKey: await gateway.createKey({ team_id: 'team-a', cache_enabled: false }),
      baseURL: `${gateway.baseUrl}/v1`,
      maxRetries: 0,
    });
    await ask({});
    expect((await ask({}, off)).response.headers.get('x-switchboard-cache')).toBe('bypass');
    expect(upstream.requests).toHaveLength(2);
  });

  it('replays cached streams of the Responses and Messages formats with their own terminal events', async () => {
    upstream.defaultScenario = { kind: 'answer', text: 'one two three' };
    const post = (path: string, body: object) =>
      fetch(`${gateway.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const cases = [
      ['/v1/responses', { model: 'cached', input: 'count', stream: true }, 'response.completed'],
      [
        '/v1/messages',
        { model: 'cached', max_tokens: 16, messages: [{ role: 'user', content: 'count' }], stream: true },
        'message_stop',
      ],
    ] as const;
    for (const [path, body, marker] of cases) {
      const first = await post(path, body);
      const firstText = await first.text();
      const second = await post(path, body);
      const secondText = await second.text();
      const statuses = [first.headers.get('x-switchboard-cache'), second.headers.get('x-switchboard-cache')];
      expect(statuses, path).toEqual(['miss', 'hit']);
      expect(firstText).toContain(marker);
      expect(secondText).toContain(marker);
      expect(secondText).toContain('three');
    }
    expect(upstream.requests).toHaveLength(2);
  });

  // Redis expires entries on its own clock (the store suite checks the PTTL it sets).
  it.skipIf(onRedis)(
    'expires an entry after its TTL (injected clock), and a per-request ttl shortens it',
    async () => {
      await ask({ cache: { ttl: 5 } });
      clock.advance(4_000);
      expect((await ask({})).response.headers.get('x-switchboard-cache')).toBe('hit');
      clock.advance(2_000);
      expect((await ask({})).response.headers.get('x-switchboard-cache')).toBe('miss');
    },
  );

  it('still charges limits on hits, and records each hit in spend at cost 0', async () => {
    const limited = await gateway.createKey({ team_id: 'team-a', rpm_limit: 2 });
    const limitedClient = new OpenAI({ apiKey: limited, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    await ask({});
    const hit = await ask({}, limitedClient);
    expect(hit.response.headers.get('x-switchboard-cache')).toBe('hit');
    await ask({}, limitedClient);
    await expect(ask({}, limitedClient)).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    const requestId = hit.response.headers.get('x-request-id');
    let rows: any[] = [];
    // JSON answers do not wait for their spend record (legacy mode): poll until it is written.
    for (let wait = 0; wait < 100 && rows.length === 0; wait++) {
      rows = (
        await sql`select cache_hit, cost, status from spend_logs where request_id = ${requestId}`.execute(
          gateway.gateway.database.db,
        )
      ).rows as any[];
      if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(rows.map((row) => ({ ...row, cost: Number(row.cost) }))).toEqual([
      { cache_hit: 1, cost: 0, status: 200 },
    ]);
  });

  it.runIf(onRedis)('shares hits between replicas on one Redis', async () => {
    const second = await start();
    await ask({});
    const other = new OpenAI({ apiKey: key, baseURL: `${second.baseUrl}/v1`, maxRetries: 0 });
    expect((await ask({}, other)).response.headers.get('x-switchboard-cache')).toBe('hit');
    expect(upstream.requests).toHaveLength(1);
  });
});

describe('response cache with Redis down', () => {
  it('answers uncached while the cache store is unreachable, and counts the errors', async () => {
    const redis = await PrivateRedis.start();
    const backend = sqliteBackend();
    const upstream = await FakeOpenAiServer.start();
    const gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - { model_name: cached, params: { provider: openai, model: up, api_base: "${upstream.baseUrl}" } }
`,
      generalSettings: `  redis_url: ${JSON.stringify(redis.url)}\n  response_cache: { enabled: true }\n`,
    });
    try {
      const client = new OpenAI({
        apiKey: await gateway.createKey(),
        baseURL: `${gateway.baseUrl}/v1`,
        maxRetries: 0,
      });
      await redis.kill();
      for (let index = 0; index < 2; index++) {
        const { data } = await client.chat.completions.create(question).withResponse();
        expect(data.choices[0]!.message.content).toBe('echo: What is the answer?');
      }
      expect(upstream.requests).toHaveLength(2);
      const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/gateway_response_cache_requests_total\{outcome="read_error"\} [1-9]/);
    } finally {
      await gateway.close();
      await upstream.close();
      await redis.kill();
      await backend.cleanup();
    }
  });
});
