/**
 * The `cohere` provider against a fake Cohere v2 API: the embeddings conformance suite, then what only
 * Cohere has (input_type and truncate, output_dimension, rerank with billed search units and documents
 * filled in from the request) and LiteLLM-format configuration files naming `cohere/<model>`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddingRequest, RerankRequest } from '../../src/canonical/modalities.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import { cohereProvider } from '../../src/providers/cohere/index.ts';
import type { ProviderAdapter } from '../../src/providers/provider-adapter.ts';
import { buildModelRegistry, deploymentProblems } from '../../src/routing/model-registry.ts';
import { FakeCohereServer, readCohereFixture } from '../fakes/cohere/fake-cohere-server.ts';
import { runEmbeddingsAdapterSuite } from '../support/embeddings-adapter-suite.ts';
import { refusal } from '../support/gateway-refusal.ts';
import { failure, settingsFor } from '../support/provider-adapter-suite.ts';

const params = (origin: string, overrides: Record<string, unknown> = {}) => ({
  model: 'embed-v4.0',
  api_base: origin,
  api_key: 'co-test-key',
  ...overrides,
});

runEmbeddingsAdapterSuite({
  name: 'cohere',
  factory: cohereProvider,
  startUpstream: () => FakeCohereServer.start(),
  params: (origin) => params(origin),
  expectEndpoint(seen) {
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/v2/embed');
    expect(seen.headers.authorization).toBe('Bearer co-test-key');
    expect(seen.headers['content-type']).toBe('application/json');
  },
  textsOf: (seen) => seen.body.texts,
  batchSize: 96,
  reportsTokens: true,
  sendsRetryAfter: true,
});

const context = () => ({ signal: new AbortController().signal, requestId: 'req-cohere' });

describe('cohere embeddings: what only Cohere takes', () => {
  let upstream: FakeCohereServer;
  const adapters: ProviderAdapter[] = [];
  const embedder = (overrides: Record<string, unknown> = {}) => {
    const adapter = cohereProvider.create(settingsFor(params(upstream.origin, overrides)));
    adapters.push(adapter);
    return adapter.embeddings!;
  };
  const embed = (input: string[], extra: Partial<EmbeddingRequest> = {}) => ({
    model: 'embed-v4.0',
    input,
    ...extra,
  });

  beforeAll(async () => {
    upstream = await FakeCohereServer.start();
  });
  afterAll(async () => {
    await Promise.all(adapters.map((adapter) => adapter.close()));
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  it('sends input_type search_document by default (v3+ models require one), float vectors only', async () => {
    await embedder().embed(embed(['a']), context());
    expect(upstream.requests[0]!.body).toEqual({
      model: 'embed-v4.0',
      input_type: 'search_document',
      embedding_types: ['float'],
      texts: ['a'],
    });
  });

  it("takes input_type and truncate from the deployment, and the caller's values over them", async () => {
    const configured = embedder({ input_type: 'search_query', truncate: 'END' });
    await configured.embed(embed(['a']), context());
    expect(upstream.requests[0]!.body).toMatchObject({ input_type: 'search_query', truncate: 'END' });
    await configured.embed(embed(['b'], { input_type: 'clustering', truncate: 'start' }), context());
    expect(upstream.requests[1]!.body).toMatchObject({ input_type: 'clustering', truncate: 'START' });
  });

  it("refuses a caller's unknown input_type or truncate with a 400 naming the field, before any call", async () => {
    const embeddings = embedder();
    expect(await refusal(embeddings.embed(embed(['a'], { input_type: 'image' }), context()))).toMatchObject({
      status: 400,
      param: 'input_type',
    });
    expect(await refusal(embeddings.embed(embed(['a'], { truncate: 'MIDDLE' }), context()))).toMatchObject({
      status: 400,
      param: 'truncate',
    });
    expect(upstream.requests).toHaveLength(0);
  });

  it('sends dimensions as output_dimension to embed-v4, and refuses it for fixed-size v3 models', async () => {
    await embedder().embed(embed(['a'], { dimensions: 512 }), context());
    expect(upstream.requests[0]!.body.output_dimension).toBe(512);
    const v3 = embedder({ model: 'embed-english-v3.0' });
    const error = await refusal(
      v3.embed({ model: 'embed-english-v3.0', input: ['a'], dimensions: 512 }, context()),
    );
    expect(error).toMatchObject({ status: 400, param: 'dimensions' });
    expect(upstream.requests).toHaveLength(1);
  });

  it('maps a recorded-format answer: embeddings.float in order, billed input tokens as usage', async () => {
    upstream.enqueue({ kind: 'fixture', file: 'embed-v4-floats.json' });
    const result = await embedder().embed(embed(['tall ships at dawn', 'a harbour in the fog']), context());
    const fixture = readCohereFixture('embed-v4-floats.json');
    expect(result.response.data.map((item) => item.embedding)).toEqual(fixture.embeddings.float);
    expect(result.usage).toEqual({ prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 });
    expect(result.units).toBeUndefined();
  });

  it('reports no usage when Cohere bills no input tokens (never an estimate)', async () => {
    const fixture = readCohereFixture('embed-v4-floats.json');
    upstream.enqueue({ kind: 'raw-json', body: { ...fixture, meta: { api_version: { version: '2' } } } });
    const result = await embedder().embed(embed(['one', 'two']), context());
    expect(result.usage).toBeUndefined();
    expect(result.response.usage).toBeUndefined();
  });

  it('refuses a vector that is not a list of numbers as a protocol error', async () => {
    upstream.enqueue({ kind: 'raw-json', body: { embeddings: { float: [[0.1], ['x']] } } });
    expect(await failure(embedder().embed(embed(['one', 'two']), context()))).toMatchObject({
      kind: 'protocol',
    });
  });
});

describe('cohere rerank', () => {
  let upstream: FakeCohereServer;
  let adapter: ProviderAdapter;
  const documents = [
    'Carson City is the capital of Nevada.',
    { text: 'Saipan is the capital of the Northern Mariana Islands.', id: 'doc-2' },
    'Washington, D.C. is the capital of the United States.',
  ];
  const rerank = (extra: Partial<RerankRequest> = {}): RerankRequest => ({
    model: 'rerank-v3.5',
    query: 'What is the capital of the United States?',
    documents,
    ...extra,
  });

  beforeAll(async () => {
    upstream = await FakeCohereServer.start();
    adapter = cohereProvider.create(settingsFor(params(upstream.origin, { model: 'rerank-v3.5' })));
  });
  afterAll(async () => {
    await adapter.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  it('sends documents as strings (an object as its text) with top_n and max_tokens_per_doc', async () => {
    await adapter.rerank!.rerank(rerank({ top_n: 2, max_tokens_per_doc: 512 }), context());
    const seen = upstream.requests[0]!;
    expect(seen.path).toBe('/v2/rerank');
    expect(seen.headers.authorization).toBe('Bearer co-test-key');
    expect(seen.body).toEqual({
      model: 'rerank-v3.5',
      query: 'What is the capital of the United States?',
      documents: [documents[0], (documents[1] as { text: string }).text, documents[2]],
      top_n: 2,
      max_tokens_per_doc: 512,
    });
  });

  it('answers the results best first, with billed search units', async () => {
    upstream.enqueue({ kind: 'fixture', file: 'rerank-v3.5.json' });
    const { response, units, usage } = await adapter.rerank!.rerank(rerank(), context());
    expect(response.results).toEqual([
      { index: 2, relevance_score: 0.98132 },
      { index: 0, relevance_score: 0.40417 },
      { index: 1, relevance_score: 0.00862 },
    ]);
    expect(response.id).toBe('b7a3e5c0-41d2-4f5e-8a6b-0c9d2e1f3a57');
    expect(units).toEqual({ searches: 2 });
    expect(response.usage).toEqual({ search_units: 2 });
    expect(usage).toBeUndefined();
  });

  it('fills each result’s document from the request when the caller asks return_documents', async () => {
    const { response } = await adapter.rerank!.rerank(
      rerank({ return_documents: true, top_n: 2 }),
      context(),
    );
    expect(response.results).toEqual([
      { index: 2, relevance_score: expect.any(Number), document: { text: documents[2] } },
      { index: 0, relevance_score: expect.any(Number), document: { text: documents[0] } },
    ]);
  });

  it('bills one search when Cohere reports no search units', async () => {
    const fixture = readCohereFixture('rerank-v3.5.json');
    upstream.enqueue({ kind: 'raw-json', body: { ...fixture, meta: undefined } });
    expect((await adapter.rerank!.rerank(rerank(), context())).units).toEqual({ searches: 1 });
  });

  it('refuses a result pointing outside the documents, or without a score, as a protocol error', async () => {
    upstream.enqueue({ kind: 'raw-json', body: { results: [{ index: 3, relevance_score: 0.5 }] } });
    expect(await failure(adapter.rerank!.rerank(rerank(), context()))).toMatchObject({ kind: 'protocol' });
    upstream.enqueue({ kind: 'raw-json', body: { results: [{ index: 0 }] } });
    expect(await failure(adapter.rerank!.rerank(rerank(), context()))).toMatchObject({ kind: 'protocol' });
    upstream.enqueue({ kind: 'garbage' });
    expect(await failure(adapter.rerank!.rerank(rerank(), context()))).toMatchObject({ kind: 'protocol' });
  });

  it('classifies rerank failures like embeddings: 429 retryable with its Retry-After, 400 not, body never relayed', async () => {
    upstream.enqueue({ kind: 'error', status: 429, retryAfterSeconds: 3, secret: 'sk-rerank-leak' });
    const limited = await failure(adapter.rerank!.rerank(rerank(), context()));
    expect(limited).toMatchObject({ status: 429, retryable: true, retryAfterMs: 3_000 });
    upstream.enqueue({ kind: 'error', status: 400, secret: 'sk-rerank-leak' });
    const rejected = await failure(adapter.rerank!.rerank(rerank(), context()));
    expect(rejected).toMatchObject({ status: 400, retryable: false });
    upstream.enqueue({ kind: 'error', status: 503 });
    expect((await failure(adapter.rerank!.rerank(rerank(), context()))).retryable).toBe(true);
    for (const error of [limited, rejected])
      expect(JSON.stringify({ ...error, message: error.message })).not.toContain('sk-rerank-leak');
  });

  it('refuses a bad top_n or max_tokens_per_doc with a 400 naming it, before any call', async () => {
    expect(await refusal(adapter.rerank!.rerank(rerank({ top_n: 0 }), context()))).toMatchObject({
      param: 'top_n',
    });
    expect(
      await refusal(adapter.rerank!.rerank(rerank({ max_tokens_per_doc: 'many' }), context())),
    ).toMatchObject({ param: 'max_tokens_per_doc' });
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('cohere in a configuration file', () => {
  const load = (yaml: string, env: Record<string, string> = { COHERE_API_KEY: 'co-key' }) => {
    const providers = builtinProviders();
    const config = parseConfig(yaml, {
      checkDeployment: (deploymentParams, index) => deploymentProblems(deploymentParams, index, providers),
      path: undefined,
      env,
      dataDir: '/tmp/switchboard-cohere',
      source: 'cohere.yaml',
    });
    return { config, registry: () => buildModelRegistry(config, providers, Date.now()) };
  };
  const issues = (run: () => unknown): readonly string[] => {
    try {
      run();
    } catch (error) {
      if (error instanceof ConfigError) return error.issues;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  it('loads LiteLLM’s cohere/<model> embedding and rerank deployments', () => {
    const { config, registry } = load(`
model_list:
  - model_name: embed
    litellm_params: { model: cohere/embed-v4.0, api_key: os.environ/COHERE_API_KEY, input_type: search_query }
    model_info: { mode: embedding }
  - model_name: rerank
    litellm_params: { model: cohere/rerank-v3.5, api_key: os.environ/COHERE_API_KEY, api_base: https://api.cohere.ai/v2/rerank }
    model_info: { mode: rerank }
`);
    expect(config.model_list[0]!.params).toMatchObject({ provider: 'cohere', model: 'embed-v4.0' });
    const built = registry();
    expect(built.group('embed')?.deployments[0]?.adapter.embeddings).toBeDefined();
    expect(built.group('rerank')?.deployments[0]?.adapter.rerank).toBeDefined();
  });

  it('refuses a cohere group left in the default chat mode, saying what cohere serves', () => {
    const { registry } = load(
      'model_list:\n  - model_name: c\n    litellm_params: { model: cohere/rerank-v3.5, api_key: k }\n',
    );
    expect(issues(registry)).toEqual([
      "model_list[0].model_info.mode: 'chat' (the default) needs the chat capability, which provider 'cohere' does not serve for model 'rerank-v3.5' (it serves model_info.mode embedding, rerank)",
    ]);
  });

  it('refuses wrong params by name: an unknown input_type, a v1 api_base, a missing key', () => {
    expect(
      issues(() =>
        load(`
model_list:
  - model_name: e
    litellm_params: { model: cohere/embed-v4.0, api_key: k, input_type: image, truncate: middle }
    model_info: { mode: embedding }
  - model_name: r
    litellm_params: { model: cohere/rerank-v3.5, api_key: k, api_base: https://api.cohere.ai/v1/rerank }
    model_info: { mode: rerank }
  - model_name: n
    litellm_params: { model: cohere/rerank-v3.5 }
    model_info: { mode: rerank }
`),
      ),
    ).toEqual([
      'model_list[0].litellm_params.input_type: must be one of search_document, search_query, classification, clustering',
      'model_list[0].litellm_params.truncate: must be one of NONE, START, END',
      "model_list[1].litellm_params.api_base: points at Cohere's v1 API; Switchboard speaks v2 (write the server URL)",
      'model_list[2].litellm_params.api_key: is required for the Cohere API (a key from the Cohere dashboard)',
    ]);
  });
});
