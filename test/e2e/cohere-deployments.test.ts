/**
 * Cohere deployments through a real gateway: the `openai` SDK embedding on a `cohere` embedding group
 * (its default base64, decoded) and Cohere's v2 SDK reranking on a `cohere` rerank group, against the
 * fake Cohere API that records what it received. Token arrays are refused with a 400 naming `input`
 * that leaves the deployment serving; an upstream 429 reaches the caller as one, its body never.
 */
import { CohereClientV2 } from 'cohere-ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeCohereServer } from '../fakes/cohere/fake-cohere-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { fakeTokens, fakeVector } from '../support/embeddings-adapter-suite.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('cohere embedding and rerank deployments through the gateway', () => {
  let backend: Backend;
  let upstream: FakeCohereServer;
  let gateway: TestGateway;
  let key: string;
  let openai: OpenAI;

  beforeAll(async () => {
    upstream = await FakeCohereServer.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: cohere-embed
    litellm_params: { model: cohere/embed-v4.0, api_base: "${upstream.origin}", api_key: co-upstream-key }
    model_info: { id: cohere-embed-1, mode: embedding }
  - model_name: cohere-rerank
    litellm_params: { model: cohere/rerank-v3.5, api_base: "${upstream.origin}/v2/rerank", api_key: co-upstream-key }
    model_info: { id: cohere-rerank-1, mode: rerank }
router_settings:
  allowed_fails: 1
  num_retries: 0
`,
    });
    key = await gateway.createKey();
    openai = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });
  beforeEach(() => upstream.reset());

  const post = (path: string, body: object) =>
    fetch(`${gateway.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('embeds with the openai SDK (its default base64, decoded) and reports Cohere’s billed tokens', async () => {
    const texts = ['tall ships', 'a harbour in the fog'];
    const answer = await openai.embeddings.create({ model: 'cohere-embed', input: texts });
    expect(answer.data.map((item) => Array.from(item.embedding))).toEqual(texts.map(fakeVector));
    expect(answer.model).toBe('cohere-embed');
    const tokens = texts.reduce((sum, text) => sum + fakeTokens(text), 0);
    expect(answer.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
    const seen = upstream.requests[0]!;
    expect(seen.path).toBe('/v2/embed');
    expect(seen.headers.authorization).toBe('Bearer co-upstream-key');
    expect(seen.body).toEqual({
      model: 'embed-v4.0',
      input_type: 'search_document',
      embedding_types: ['float'],
      texts,
    });
  });

  it('passes the caller’s input_type and dimensions through to Cohere', async () => {
    const response = await post('/v1/embeddings', {
      model: 'cohere-embed',
      input: 'where is the harbour?',
      input_type: 'search_query',
      dimensions: 256,
      encoding_format: 'float',
    });
    expect(response.status).toBe(200);
    expect(upstream.requests[0]!.body).toMatchObject({ input_type: 'search_query', output_dimension: 256 });
  });

  it('refuses token arrays with a 400 naming input, without cooling the deployment down', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const response = await post('/v1/embeddings', { model: 'cohere-embed', input: [[1, 2, 3]] });
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).error).toMatchObject({
        param: 'input',
        type: 'invalid_request_error',
      });
    }
    expect(upstream.requests).toHaveLength(0);
    // allowed_fails is 1: had the refusals counted against the deployment, this call would get a 503.
    const answer = await openai.embeddings.create({ model: 'cohere-embed', input: 'still serving' });
    expect(Array.from(answer.data[0]!.embedding)).toEqual(fakeVector('still serving'));
  });

  it('reranks with Cohere’s v2 SDK pointed at the gateway, billed search units in meta', async () => {
    const cohere = new CohereClientV2({ token: key, environment: gateway.baseUrl, maxRetries: 0 });
    const documents = ['Paris is in France.', 'Rome is the capital of Italy.', 'Bern is Swiss.'];
    const answer = await cohere.rerank({
      model: 'cohere-rerank',
      query: 'the capital of Italy',
      documents,
      topN: 2,
    });
    expect(answer.results.map((result) => result.index)).toEqual([1, 0]);
    expect(answer.results[0]!.relevanceScore).toBeGreaterThan(answer.results[1]!.relevanceScore);
    expect(answer.meta?.billedUnits?.searchUnits).toBe(1);
    const seen = upstream.requests[0]!;
    expect(seen.path).toBe('/v2/rerank');
    expect(seen.headers.authorization).toBe('Bearer co-upstream-key');
    expect(seen.body).toEqual({ model: 'rerank-v3.5', query: 'the capital of Italy', documents, top_n: 2 });
  });

  it('reranks object documents by their text over plain HTTP, returning the documents asked for', async () => {
    const response = await post('/v1/rerank', {
      model: 'cohere-rerank',
      query: 'harbour',
      documents: [{ text: 'a quiet harbour' }, { text: 'a mountain pass' }],
      return_documents: true,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.results[0]).toMatchObject({ index: 0, document: { text: 'a quiet harbour' } });
    expect(body.usage).toMatchObject({ search_units: 1 });
    expect(upstream.requests[0]!.body.documents).toEqual(['a quiet harbour', 'a mountain pass']);
  });

  it('answers an upstream 429 as a 429 with retry-after, never relaying Cohere’s body', async () => {
    upstream.enqueue({ kind: 'error', status: 429, retryAfterSeconds: 2, secret: 'sk-cohere-leak' });
    const response = await post('/v1/rerank', {
      model: 'cohere-rerank',
      query: 'q',
      documents: ['a'],
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
    const text = await response.text();
    expect(text).not.toContain('sk-cohere-leak');
    expect(JSON.parse(text).error.code).toBe('upstream_rate_limited');
  });
});
