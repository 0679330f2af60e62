/**
 * The embeddings, images and rerank capabilities of OpenAI-style deployments against the fake upstream:
 * the path and authentication each operation uses (OpenAI's `<base>/<operation>` with a bearer key,
 * Azure's deployment path with `api-key`), what goes up, what is reported for accounting (tokens,
 * images, searches), the upstream text kept only when it is what the caller asked for, and malformed
 * or failing answers classified without relaying their bodies.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { azureProvider } from '../../src/providers/azure/index.ts';
import { openAiCompatibleProviders } from '../../src/providers/openai/index.ts';
import type { ProviderAdapter } from '../../src/providers/provider-adapter.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { failure, settingsFor } from '../support/provider-adapter-suite.ts';

const providers = Object.fromEntries(openAiCompatibleProviders());
const context = () => ({ signal: new AbortController().signal, requestId: 'req-1' });

describe('OpenAI-style embeddings, images and rerank', () => {
  let upstream: FakeOpenAiServer;
  let openai: ProviderAdapter;
  let azure: ProviderAdapter;
  let tei: ProviderAdapter;

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    const create = (name: string, params: Record<string, unknown>) =>
      providers[name]!.create(settingsFor({ model: 'upstream-model', ...params }));
    openai = create('openai', { api_base: upstream.baseUrl, api_key: 'sk-upstream' });
    tei = create('openai_compatible', { api_base: upstream.origin, rerank_format: 'tei' });
    azure = azureProvider.create(
      settingsFor({
        model: 'embed-deployment',
        api_base: upstream.origin,
        api_key: 'azure-key',
        api_version: '2024-06-01',
      }),
    );
  });
  afterAll(async () => {
    await Promise.all([openai?.close(), azure?.close(), tei?.close()]);
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  describe('embeddings', () => {
    it("posts the caller's request to <base>/embeddings and keeps the upstream's text in the asked encoding", async () => {
      const result = await openai.embeddings!.embed(
        {
          model: 'upstream-model',
          input: ['ab', 'cde'],
          encoding_format: 'base64',
          dimensions: 3,
          vendor: 1,
        },
        context(),
      );
      const seen = upstream.requests[0]!;
      expect(seen.path).toBe('/v1/embeddings');
      expect(seen.headers.authorization).toBe('Bearer sk-upstream');
      expect(seen.body).toEqual({
        model: 'upstream-model',
        input: ['ab', 'cde'],
        encoding_format: 'base64',
        dimensions: 3,
        vendor: 1,
      });
      expect(result.json).toBeDefined();
      expect(JSON.parse(result.json!).data[1].embedding).toBe(result.response.data[1]!.embedding);
      expect(typeof result.response.data[0]!.embedding).toBe('string');
      expect(result.usage).toEqual({ prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 });
      expect(result.units).toBeUndefined();
    });

    it('drops the upstream text when the server answered floats to a base64 request (the edge converts)', async () => {
      upstream.enqueue({ kind: 'answer', ignoreEncoding: true });
      const result = await openai.embeddings!.embed(
        { model: 'upstream-model', input: 'ab', encoding_format: 'base64' },
        context(),
      );
      expect(result.json).toBeUndefined();
      expect(result.response.data[0]!.embedding).toEqual([2, 97, 0.5]);
    });

    it('reports no usage when the server gives none (tokens are never estimated)', async () => {
      upstream.enqueue({ kind: 'answer', omitUsage: true });
      const result = await openai.embeddings!.embed({ model: 'upstream-model', input: 'ab' }, context());
      expect(result.usage).toBeUndefined();
    });

    it("goes to Azure's deployment path with the api-key header", async () => {
      await azure.embeddings!.embed({ model: 'embed-deployment', input: 'x' }, context());
      const seen = upstream.requests[0]!;
      expect(seen.path).toBe('/openai/deployments/embed-deployment/embeddings?api-version=2024-06-01');
      expect(seen.headers['api-key']).toBe('azure-key');
      expect(seen.headers.authorization).toBeUndefined();
    });

    it('classifies malformed answers as protocol errors and failures by status, never relaying the body', async () => {
      upstream.enqueue({ kind: 'garbage' });
      expect((await failure(openai.embeddings!.embed({ model: 'm', input: 'x' }, context()))).kind).toBe(
        'protocol',
      );
      upstream.enqueue({ kind: 'error', status: 500 });
      const error = await failure(openai.embeddings!.embed({ model: 'm', input: 'x' }, context()));
      expect(error.status).toBe(500);
      expect(error.retryable).toBe(true);
      expect(error.message).not.toContain('sk-upstream-leak');
    });
  });

  describe('images', () => {
    it('posts to <base>/images/generations and bills the images returned', async () => {
      const result = await openai.images!.generate(
        { model: 'dall-e-3', prompt: 'a lighthouse', n: 2, size: '1024x1024' },
        context(),
      );
      expect(upstream.requests[0]!.path).toBe('/v1/images/generations');
      expect(upstream.requests[0]!.body).toMatchObject({ prompt: 'a lighthouse', n: 2, size: '1024x1024' });
      expect(result.units).toEqual({ images: 2 });
      expect(result.usage).toBeUndefined();
      expect(JSON.parse(result.json!).data).toHaveLength(2);
    });

    it("maps gpt-image's input/output tokens to prompt/completion tokens", async () => {
      const result = await openai.images!.generate({ model: 'gpt-image-1', prompt: 'x' }, context());
      expect(result.usage).toEqual({ prompt_tokens: 10, completion_tokens: 4160, total_tokens: 4170 });
      expect(result.units).toEqual({ images: 1 });
    });

    it("goes to Azure's deployment path", async () => {
      await azure.images!.generate({ model: 'embed-deployment', prompt: 'x' }, context());
      expect(upstream.requests[0]!.path).toBe(
        '/openai/deployments/embed-deployment/images/generations?api-version=2024-06-01',
      );
    });

    it('refuses an answer that is not an images response', async () => {
      upstream.enqueue({ kind: 'garbage' });
      expect((await failure(openai.images!.generate({ model: 'm', prompt: 'x' }, context()))).kind).toBe(
        'protocol',
      );
    });
  });

  describe('rerank', () => {
    it('is not served by azure, which has no rerank operation (a rerank group on azure is refused at start)', () => {
      expect(azure.rerank).toBeUndefined();
      expect(azure.embeddings).toBeDefined();
      expect(azure.transcription).toBeDefined();
    });

    const documents = ['Paris is in France', { text: 'Rome is the capital of Italy', id: 3 }, 'Berlin'];

    it('sends documents as texts in the Cohere-style format and reads results, tokens and one search', async () => {
      const result = await openai.rerank!.rerank(
        {
          model: 'upstream-model',
          query: 'capital of Italy',
          documents,
          top_n: 2,
          return_documents: true,
          truncate_prompt_tokens: 64,
        },
        context(),
      );
      const seen = upstream.requests[0]!;
      expect(seen.path).toBe('/v1/rerank');
      expect(seen.body).toEqual({
        model: 'upstream-model',
        query: 'capital of Italy',
        documents: ['Paris is in France', 'Rome is the capital of Italy', 'Berlin'],
        top_n: 2,
        truncate_prompt_tokens: 64,
      });
      expect(result.response.id).toBe('rerank-fake');
      expect(result.response.results.map((item) => item.index)).toEqual([1, 0]);
      expect(result.units).toEqual({ searches: 1 });
      expect(result.usage?.prompt_tokens).toBeGreaterThan(0);
    });

    it('speaks TEI with rerank_format: tei: texts up, a bare rank list back, cut to top_n here', async () => {
      const result = await tei.rerank!.rerank(
        { model: 'upstream-model', query: 'capital of Italy', documents, top_n: 1 },
        context(),
      );
      const seen = upstream.requests[0]!;
      expect(seen.path).toBe('/rerank');
      expect(seen.body).toEqual({
        query: 'capital of Italy',
        texts: ['Paris is in France', 'Rome is the capital of Italy', 'Berlin'],
      });
      expect(result.response.results).toEqual([{ index: 1, relevance_score: 1 }]);
      expect(result.units).toEqual({ searches: 1 });
      expect(result.usage).toBeUndefined();
    });

    it('refuses an unknown rerank_format by name', () => {
      expect(providers.openai!.validate({ model: 'm', rerank_format: 'jina' })).toEqual([
        'rerank_format: must be one of cohere, tei',
      ]);
    });

    it('refuses an answer without results as a protocol error', async () => {
      upstream.enqueue({ kind: 'garbage' });
      const error = await failure(
        openai.rerank!.rerank({ model: 'm', query: 'q', documents: ['a'] }, context()),
      );
      expect(error.kind).toBe('protocol');
    });
  });
});
