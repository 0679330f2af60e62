/**
 * Embeddings, images and rerank share the text endpoints' pipeline (issue 13): an over-limit key gets
 * 429 on embeddings, a failing embedding deployment (500, 429) fails over to a healthy one, bad input
 * on each endpoint is a 4xx naming the field with nothing sent upstream, upstream failures are
 * classified without relaying their bodies, and an embeddings call is recorded in spend with its tokens.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('the embeddings, images and rerank endpoints in the shared pipeline', () => {
  let backend: Backend;
  let bad: FakeOpenAiServer;
  let good: FakeOpenAiServer;
  let gateway: TestGateway;
  let key: string;

  // The failing deployment carries nearly all the weight, so the first attempt goes to it.
  const pair = (name: string) => `
  - model_name: ${name}
    params: { provider: openai, model: up-embed, api_base: "BAD", weight: 1000000 }
    model_info: { id: ${name}-bad, mode: embedding }
  - model_name: ${name}
    params: { provider: openai, model: up-embed, api_base: "GOOD", weight: 1 }
    model_info: { id: ${name}-good, mode: embedding }`;

  beforeAll(async () => {
    bad = await FakeOpenAiServer.start();
    good = await FakeOpenAiServer.start();
    backend = sqliteBackend();
    const yaml = `
model_list:${pair('embed500')}${pair('embed429')}
  - model_name: embedder
    params: { provider: openai, model: up-embed, api_base: "GOOD" }
    model_info: { id: embedder-1, mode: embedding, input_cost_per_token: 0.0000001 }
  - { model_name: painter, params: { provider: openai, model: dall-e-3, api_base: "GOOD" }, model_info: { mode: image_generation } }
  - { model_name: ranker, params: { provider: openai, model: rr, api_base: "GOOD" }, model_info: { mode: rerank } }
  - { model_name: broken, params: { provider: openai, model: up-embed, api_base: "BAD" }, model_info: { mode: embedding } }
router_settings:
  num_retries: 2
  allowed_fails: 5
  cooldown_time: 1
`
      .replaceAll('"BAD"', `"${bad.baseUrl}"`)
      .replaceAll('"GOOD"', `"${good.baseUrl}"`);
    gateway = await startTestGateway({ backend, yaml, generalSettings: '  max_request_body_bytes: 65536\n' });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await bad?.close();
    await good?.close();
    await backend?.cleanup();
  });
  beforeEach(() => {
    bad.reset();
    good.reset();
  });

  const post = (path: string, body: string | object, secret = key, contentType = 'application/json') =>
    fetch(`${gateway.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('answers 429 with retry-after to a key over its rpm limit on /v1/embeddings', async () => {
    const limited = await gateway.createKey({ rpm_limit: 1 });
    expect((await post('/v1/embeddings', { model: 'embedder', input: 'a' }, limited)).status).toBe(200);
    const rejected = await post('/v1/embeddings', { model: 'embedder', input: 'b' }, limited);
    expect(rejected.status).toBe(429);
    expect(Number(rejected.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await rejected.json()) as any).error.type).toBe('rate_limit_error');
    expect(good.requests).toHaveLength(1);
  });

  it.each([
    ['embed500', { kind: 'error', status: 500 }],
    ['embed429', { kind: 'error', status: 429, headers: { 'retry-after': '5' } }],
  ] as const)('%s: fails over to the healthy embedding deployment', async (model, scenario) => {
    bad.defaultScenario = scenario as never;
    const response = await post('/v1/embeddings', { model, input: ['x', 'y'] });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-switchboard-deployment')).toBe(`${model}-good`);
    expect(response.headers.get('x-switchboard-attempts')).toBe('2');
    expect(((await response.json()) as any).data).toHaveLength(2);
    expect(bad.requests).toHaveLength(1);
    expect(good.requests[0]!.path).toBe('/v1/embeddings');
  });

  it('classifies an upstream refusal or a malformed answer without relaying the body', async () => {
    bad.enqueue({ kind: 'error', status: 400, code: 'invalid_value' });
    const refused = await post('/v1/embeddings', { model: 'broken', input: 'x' });
    expect(refused.status).toBe(400);
    const refusal = await refused.text();
    expect(JSON.parse(refusal).error.code).toBe('upstream_rejected_request');
    expect(refusal).not.toContain('sk-upstream-leak');
    bad.defaultScenario = { kind: 'garbage' };
    const garbled = await post('/v1/embeddings', { model: 'broken', input: 'x' });
    expect(garbled.status).toBeGreaterThanOrEqual(500);
    expect(await garbled.text()).not.toContain('not json');
  });

  const valid: Record<string, object> = {
    '/v1/embeddings': { model: 'embedder', input: 'x' },
    '/v1/images/generations': { model: 'painter', prompt: 'x' },
    '/v1/rerank': { model: 'ranker', query: 'q', documents: ['a'] },
  };
  const fieldCases: Record<string, Array<[object, string]>> = {
    '/v1/embeddings': [
      [{ input: '' }, 'input'],
      [{ input: [] }, 'input'],
      [{ input: [1.5, 2] }, 'input'],
      [{ encoding_format: 'int8' }, 'encoding_format'],
      [{ dimensions: -3 }, 'dimensions'],
    ],
    '/v1/images/generations': [
      [{ size: 'huge' }, 'size'],
      [{ size: '100000x10' }, 'size'],
      [{ n: 11 }, 'n'],
      [{ response_format: 'png' }, 'response_format'],
      [{ prompt: '' }, 'prompt'],
    ],
    '/v1/rerank': [
      [{ query: '' }, 'query'],
      [{ documents: [] }, 'documents'],
      [{ documents: [{ body: 'x' }] }, 'documents'],
      [{ top_n: 0 }, 'top_n'],
    ],
  };

  it.each(Object.keys(valid))(
    '%s: bad fields are 400 naming the field; nothing reaches the upstream',
    async (path) => {
      for (const [extra, param] of fieldCases[path]!) {
        const response = await post(path, { ...valid[path], ...extra });
        const body = (await response.json()) as any;
        expect(response.status, JSON.stringify(extra)).toBe(400);
        expect(body.error.param, JSON.stringify(extra)).toBe(param);
        expect(body.error.message).toContain(param);
      }
      expect(good.requests).toHaveLength(0);
    },
  );

  it.each(Object.keys(valid))(
    '%s: deep nesting, broken JSON, huge bodies, text/plain and a wrong model type are 4xx',
    async (path) => {
      const hostile: Array<[string, string, number]> = [
        [
          JSON.stringify({ ...valid[path], pad: 'x' }).replace('"x"}', `${nested(5_000)}}`),
          'application/json',
          400,
        ],
        ['{"model": "embedder", ', 'application/json', 400],
        [JSON.stringify({ ...valid[path], pad: 'x'.repeat(70_000) }), 'application/json', 413],
        [JSON.stringify(valid[path]), 'text/plain', 415],
        ['[1, 2, 3]', 'application/json', 400],
        [JSON.stringify({ ...valid[path], model: 7 }), 'application/json', 400],
        [JSON.stringify({ ...valid[path], model: 'no-such-model' }), 'application/json', 404],
      ];
      for (const [body, type, status] of hostile) {
        const response = await post(path, body, key, type);
        expect(response.status, `${body.slice(0, 40)} ${type}`).toBe(status);
      }
      expect(good.requests).toHaveLength(0);
    },
  );

  it('documents every path of the three endpoints in the OpenAPI document and refuses them without a key', async () => {
    const document = (await (await fetch(`${gateway.baseUrl}/openapi.json`)).json()) as any;
    for (const path of [
      '/v1/embeddings',
      '/embeddings',
      '/v1/images/generations',
      '/images/generations',
      '/v1/rerank',
      '/rerank',
      '/v2/rerank',
    ]) {
      expect(document.paths[path]?.post?.summary, path).toBeTruthy();
      expect(document.paths[path].post.security, path).toEqual([{ apiKey: [] }]);
      const anonymous = await fetch(`${gateway.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(anonymous.status, path).toBe(401);
    }
  });

  it('records an embeddings call in spend with its prompt tokens and cost', async () => {
    const db = gateway.gateway.database.db;
    await sql`delete from spend_logs`.execute(db);
    const response = await post('/v1/embeddings', { model: 'embedder', input: ['hello', 'you'] });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    const started = Date.now();
    let rows: any[] = [];
    while (rows.length === 0 && Date.now() - started < 5_000) {
      rows = (await sql`select * from spend_logs where request_id = ${requestId}`.execute(db)).rows as any[];
      if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(rows[0]).toMatchObject({
      model: 'embedder',
      deployment_id: 'embedder-1',
      endpoint: '/v1/embeddings',
      status: 200,
      usage_known: 1,
    });
    expect(Number(rows[0].prompt_tokens)).toBe(8);
    expect(Number(rows[0].completion_tokens)).toBe(0);
    expect(rows[0].cost).toBeCloseTo(8 * 0.0000001, 12);
  });
});
