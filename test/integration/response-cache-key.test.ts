/**
 * Issue 25: the response cache key hashes every field sent upstream except those known not to change
 * the answer (cache version 7), so a teammate's `logit_bias` or `n` no longer decides the answer another
 * key gets; an answer a fallback group gave is cached under that group, so a key limited to the
 * requested group never reads it; a per-request `cache.ttl` is clamped to `ttl_seconds`. Driven with the
 * openai SDK on both backends.
 */
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const question = { model: 'cached', messages: [{ role: 'user' as const, content: 'What is the answer?' }] };

describe.each(await availableBackends())('the response cache key on %s', (_name, makeBackend) => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let broken: FakeOpenAiServer;
  let clock: ManualClock;
  let gateway: TestGateway;
  let client: OpenAI;

  const clientOf = async (body: Record<string, unknown>) =>
    new OpenAI({ apiKey: await gateway.createKey(body), baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await FakeOpenAiServer.start();
    broken = await FakeOpenAiServer.start();
    broken.defaultScenario = { kind: 'error', status: 500 };
    clock = new ManualClock(Date.now());
    gateway = await startTestGateway({
      backend,
      clock,
      yaml: `
model_list:
  - model_name: cached
    params: { provider: openai, model: up, api_base: "${upstream.baseUrl}" }
  - model_name: fbsrc
    params: { provider: openai, model: down, api_base: "${broken.baseUrl}" }
  - model_name: modelB
    params: { provider: openai, model: b, api_base: "${upstream.baseUrl}" }
router_settings:
  num_retries: 0
  fallbacks: [{ fbsrc: [modelB] }]
`,
      generalSettings: '  response_cache: { enabled: true, ttl_seconds: 60, scope: team }\n',
    });
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-a' });
    client = await clientOf({ team_id: 'team-a' });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await broken?.close();
    await backend?.cleanup();
  });
  beforeEach(async () => {
    upstream.reset();
    await gateway.admin('DELETE', '/ui/api/cache');
  });

  const ask = async (body: object, target = client) => {
    const { response } = await target.chat.completions
      .create({ ...question, ...body } as never)
      .withResponse();
    return response.headers.get('x-switchboard-cache');
  };

  it('misses when a field that changes the answer differs, though no default list named it', async () => {
    await ask({});
    const changes = [
      { logit_bias: { '50256': -100 } },
      { n: 2 },
      { user: 'teammate' },
      { prediction: { type: 'content', content: 'The answer is' } },
      { reasoning_effort: 'high' },
      { presence_penalty: 1 },
      { frequency_penalty: 1 },
      { logprobs: true },
      { parallel_tool_calls: false },
      { service_tier: 'flex' },
      { modalities: ['text'] },
      { web_search_options: {} },
    ];
    for (const change of changes) expect(await ask(change), JSON.stringify(change)).toBe('miss');
    expect(upstream.requests).toHaveLength(1 + changes.length);
  });

  it('hits when only fields known not to change the answer differ, or the key order', async () => {
    await ask({ metadata: { run: 'a' } });
    expect(await ask({ metadata: { run: 'b' } })).toBe('hit');
    const reordered = { messages: [{ content: 'What is the answer?', role: 'user' }] };
    expect(await ask(reordered)).toBe('hit');
    const read = async (streamOptions: object) => {
      const { data, response } = await client.chat.completions
        .create({ ...question, stream: true, stream_options: streamOptions } as never)
        .withResponse();
      for await (const _chunk of data as unknown as AsyncIterable<unknown>) {
        // read to the end
      }
      return response.headers.get('x-switchboard-cache');
    };
    expect(await read({ include_usage: true })).toBe('miss');
    expect(await read({ include_usage: false })).toBe('hit');
    expect(upstream.requests).toHaveLength(2);
  });

  it("caches a fallback group's answer under that group: a key limited to the requested group never reads it", async () => {
    const unrestricted = await clientOf({ team_id: 'team-a' });
    const fbsrcOnly = await clientOf({ team_id: 'team-a', models: ['fbsrc'] });
    const viaFallback = await unrestricted.chat.completions
      .create({ ...question, model: 'fbsrc' })
      .withResponse();
    expect(viaFallback.response.headers.get('x-switchboard-cache')).toBe('miss');
    expect(upstream.requests.map((request) => request.body.model)).toEqual(['b']);
    // The limited key's own routing may not fall back to modelB: it gets fbsrc's failure, not B's answer.
    await expect(fbsrcOnly.chat.completions.create({ ...question, model: 'fbsrc' })).rejects.toMatchObject({
      status: 502,
    });
    expect(upstream.requests).toHaveLength(1);
    // A caller asking modelB itself reads the answer modelB gave.
    expect(await ask({ model: 'modelB' }, unrestricted)).toBe('hit');
  });

  it('clamps a per-request cache.ttl to ttl_seconds', async () => {
    await ask({ cache: { ttl: 100_000 } });
    if (backend.redisUrl) {
      const redis = new Redis(backend.redisUrl);
      try {
        const [, keys] = await redis.scan(0, 'MATCH', `${backend.prefix}rc:7:*`, 'COUNT', 1000);
        expect(keys).toHaveLength(1);
        const ttl = await redis.pttl(keys[0]!);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(60_000);
      } finally {
        redis.disconnect();
      }
    } else {
      clock.advance(59_000);
      expect(await ask({})).toBe('hit');
      clock.advance(2_000);
      expect(await ask({})).toBe('miss');
    }
  });
});
