/**
 * The embeddings, images and rerank endpoints of issue 13 driven by the official clients through a
 * real gateway: the `openai` SDK for embeddings (floats, and its default base64 that it decodes, also
 * when the upstream ignored the encoding) and images (url and b64_json); rerank with plain fetch and
 * with Cohere's v2 SDK pointed at the gateway. The fake upstream records what it received.
 */
import { CohereClientV2 } from 'cohere-ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { embeddedDefaultYaml } from '../../src/config/load-config.ts';
import { fakeVector } from '../../src/providers/fake/fake-embeddings.ts';
import { fakeUpstreamVector } from '../fakes/fake-openai-modalities.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('embeddings, images and rerank through the official SDKs', () => {
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let gateway: TestGateway;
  let key: string;
  let openai: OpenAI;

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - model_name: embedder
    params: { provider: openai, model: upstream-embed, api_base: "${upstream.baseUrl}", api_key: sk-upstream }
    model_info: { id: embedder-1, mode: embedding }
  - model_name: demo-embed
    params: { provider: fake, model: fake-embed }
    model_info: { mode: embedding }
  - model_name: painter
    params: { provider: openai, model: dall-e-3, api_base: "${upstream.baseUrl}" }
    model_info: { mode: image_generation }
  - model_name: image-tokens
    params: { provider: openai, model: gpt-image-1, api_base: "${upstream.baseUrl}" }
    model_info: { mode: image_generation }
  - model_name: ranker
    params: { provider: hosted_vllm, model: bge-reranker, api_base: "${upstream.baseUrl}" }
    model_info: { id: ranker-1, mode: rerank }
  - model_name: chatty
    params: { provider: openai, model: upstream-gpt, api_base: "${upstream.baseUrl}" }
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

  describe('openai: /v1/embeddings', () => {
    it('answers floats in the OpenAI list shape with the public model name and usage, asking OpenAI for base64', async () => {
      const answer = await openai.embeddings.create({
        model: 'embedder',
        input: ['hello', 'hi'],
        encoding_format: 'float',
      });
      expect(answer).toEqual({
        object: 'list',
        data: [
          { object: 'embedding', index: 0, embedding: fakeUpstreamVector('hello') },
          { object: 'embedding', index: 1, embedding: fakeUpstreamVector('hi') },
        ],
        model: 'embedder',
        usage: { prompt_tokens: 7, total_tokens: 7 },
      });
      // The floats were written by the gateway from OpenAI's base64 answer, a quarter of the bytes.
      expect(upstream.requests[0]!.body).toEqual({
        model: 'upstream-embed',
        input: ['hello', 'hi'],
        encoding_format: 'base64',
      });
    });

    it("answers the SDK's default base64, which it decodes to the same floats", async () => {
      const answer = await openai.embeddings.create({ model: 'embedder', input: 'hello' });
      expect(upstream.requests[0]!.body.encoding_format).toBe('base64');
      expect(Array.from(answer.data[0]!.embedding)).toEqual(fakeUpstreamVector('hello'));
      expect(answer.model).toBe('embedder');
    });

    it('encodes base64 itself when the upstream ignored encoding_format and answered floats', async () => {
      upstream.enqueue({ kind: 'answer', ignoreEncoding: true });
      const answer = await openai.embeddings.create({ model: 'embedder', input: [[104, 105]] });
      expect(Array.from(answer.data[0]!.embedding)).toEqual(fakeUpstreamVector([104, 105]));
    });

    it('serves the fake provider with deterministic vectors (the demo configuration)', async () => {
      const first = await openai.embeddings.create({
        model: 'demo-embed',
        input: 'same text',
        dimensions: 8,
      });
      const again = await openai.embeddings.create({
        model: 'demo-embed',
        input: 'same text',
        dimensions: 8,
        encoding_format: 'float',
      });
      expect(Array.from(first.data[0]!.embedding)).toEqual(fakeVector('same text', 8));
      expect(again.data[0]!.embedding).toEqual(fakeVector('same text', 8));
      expect(first.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    });

    it('also answers at /embeddings (LiteLLM serves it without /v1), with routing headers', async () => {
      const response = await post('/embeddings', { model: 'embedder', input: 'x' });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-switchboard-deployment')).toBe('embedder-1');
      expect(((await response.json()) as any).data[0].embedding).toEqual(fakeUpstreamVector('x'));
    });
  });

  describe('openai: /v1/images/generations', () => {
    it('answers image urls with the revised prompt', async () => {
      const answer = await openai.images.generate({ model: 'painter', prompt: 'a lighthouse', n: 2 });
      expect(answer.data).toHaveLength(2);
      expect(answer.data?.[0]).toEqual({
        url: 'https://images.example.test/0.png',
        revised_prompt: 'revised: a lighthouse',
      });
      expect(upstream.requests[0]!.path).toBe('/v1/images/generations');
      expect(upstream.requests[0]!.body).toMatchObject({ model: 'dall-e-3', prompt: 'a lighthouse', n: 2 });
    });

    it('answers b64_json images, and gpt-image token usage', async () => {
      const answer = await openai.images.generate({
        model: 'painter',
        prompt: 'x',
        response_format: 'b64_json',
        size: '1024x1792',
      });
      expect(Buffer.from(answer.data![0]!.b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
      const tokens = await openai.images.generate({ model: 'image-tokens', prompt: 'x' });
      expect(tokens.usage).toMatchObject({ input_tokens: 10, output_tokens: 4160 });
    });
  });

  describe('rerank', () => {
    const documents = ['Paris is in France', 'Rome is the capital of Italy', 'Berlin'];

    it('answers results best first with documents, billed search units and usage (plain HTTP)', async () => {
      const response = await post('/v1/rerank', {
        model: 'ranker',
        query: 'capital of Italy',
        documents,
        top_n: 2,
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as any;
      expect(body.id).toBe('rerank-fake');
      expect(body.results).toEqual([
        { index: 1, relevance_score: 1, document: { text: 'Rome is the capital of Italy' } },
        { index: 0, relevance_score: 0, document: { text: 'Paris is in France' } },
      ]);
      expect(body.meta.billed_units).toEqual({ search_units: 1 });
      expect(body.usage).toMatchObject({ search_units: 1, total_tokens: expect.any(Number) });
      expect(upstream.requests[0]!.path).toBe('/v1/rerank');
      expect(upstream.requests[0]!.body).toMatchObject({ model: 'bge-reranker', top_n: 2 });
    });

    it('answers at /rerank too, and leaves documents out when return_documents is false', async () => {
      const response = await post('/rerank', {
        model: 'ranker',
        query: 'Berlin',
        documents: [{ text: 'Berlin' }, 'Paris'],
        return_documents: false,
      });
      expect(((await response.json()) as any).results).toEqual([
        { index: 0, relevance_score: 1 },
        { index: 1, relevance_score: 0 },
      ]);
    });

    it("answers Cohere's v2 SDK at /v2/rerank under the gateway's base URL", async () => {
      const cohere = new CohereClientV2({ token: key, environment: gateway.baseUrl, maxRetries: 0 });
      const answer = await cohere.rerank({ model: 'ranker', query: 'capital of Italy', documents, topN: 1 });
      expect(answer.results).toEqual([expect.objectContaining({ index: 1, relevanceScore: 1 })]);
      expect(answer.meta?.billedUnits?.searchUnits).toBe(1);
      expect(upstream.requests[0]!.body).toMatchObject({ query: 'capital of Italy', top_n: 1 });
    });
  });

  it('the embedded default configuration (a fresh clone) answers embeddings on demo-embedding', async () => {
    const demoBackend = sqliteBackend();
    const demo = await startTestGateway({ backend: demoBackend, yaml: embeddedDefaultYaml });
    try {
      const client = new OpenAI({
        apiKey: await demo.createKey(),
        baseURL: `${demo.baseUrl}/v1`,
        maxRetries: 0,
      });
      const answer = await client.embeddings.create({ model: 'demo-embedding', input: 'hello' });
      expect(Array.from(answer.data[0]!.embedding)).toEqual(fakeVector('hello', 16));
      expect((await client.models.list()).data.map((model) => model.id)).toEqual(['demo', 'demo-embedding']);
    } finally {
      await demo.close();
      await demoBackend.cleanup();
    }
  });

  describe('a model of another mode', () => {
    it('on /v1/embeddings is a 400 model_not_supported_by_endpoint naming /v1/chat/completions', async () => {
      const error = await openai.embeddings
        .create({ model: 'chatty', input: 'x' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe(
        'model_not_supported_by_endpoint',
      );
      expect((error as Error).message).toContain('/v1/chat/completions');
      expect(upstream.requests).toHaveLength(0);
    });

    it('on /v1/chat/completions names /v1/embeddings, and a rerank model on images names /v1/rerank', async () => {
      const error = await openai.chat.completions
        .create({ model: 'embedder', messages: [{ role: 'user', content: 'x' }] })
        .catch((caught: unknown) => caught);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe(
        'model_not_supported_by_endpoint',
      );
      expect((error as Error).message).toContain('/v1/embeddings');
      const images = await post('/v1/images/generations', { model: 'ranker', prompt: 'x' });
      expect(images.status).toBe(400);
      expect(((await images.json()) as any).error.message).toContain('/v1/rerank');
    });
  });
});
