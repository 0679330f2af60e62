/**
 * Gemini embeddings (`:batchEmbedContents`) against the fake Gemini API: the embeddings conformance
 * suite, then the request fields only Gemini has (model names per request, taskType,
 * outputDimensionality) and a configuration with an embedding group.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import { geminiProvider } from '../../src/providers/gemini/index.ts';
import type { ProviderAdapter } from '../../src/providers/provider-adapter.ts';
import { buildModelRegistry, deploymentProblems } from '../../src/routing/model-registry.ts';
import { FakeGeminiServer, readFixture } from '../fakes/gemini/fake-gemini-server.ts';
import { runEmbeddingsAdapterSuite } from '../support/embeddings-adapter-suite.ts';
import { refusal } from '../support/gateway-refusal.ts';
import { settingsFor } from '../support/provider-adapter-suite.ts';

const params = (origin: string, overrides: Record<string, unknown> = {}) => ({
  model: 'gemini-embedding-001',
  api_base: origin,
  api_key: 'gemini-test-key',
  ...overrides,
});

runEmbeddingsAdapterSuite({
  name: 'gemini',
  factory: geminiProvider,
  startUpstream: () => FakeGeminiServer.start(),
  params: (origin) => params(origin),
  expectEndpoint(seen) {
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(seen.headers['x-goog-api-key']).toBe('gemini-test-key');
    expect(seen.headers.accept).toBe('application/json');
  },
  textsOf: (seen) => seen.body.requests.map((request: any) => request.content.parts[0].text),
  batchSize: 100,
  reportsTokens: false,
  sendsRetryAfter: true,
});

const context = () => ({ signal: new AbortController().signal, requestId: 'req-gemini-embed' });

describe('gemini embeddings: what only Gemini takes', () => {
  let upstream: FakeGeminiServer;
  const adapters: ProviderAdapter[] = [];
  const embedder = (overrides: Record<string, unknown> = {}) => {
    const adapter = geminiProvider.create(settingsFor(params(upstream.origin, overrides)));
    adapters.push(adapter);
    return adapter.embeddings!;
  };

  beforeAll(async () => {
    upstream = await FakeGeminiServer.start();
  });
  afterAll(async () => {
    await Promise.all(adapters.map((adapter) => adapter.close()));
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  it('names the model in every request, with dimensions as outputDimensionality and no taskType by default', async () => {
    await embedder().embed(
      { model: 'gemini-embedding-001', input: ['one', 'two'], dimensions: 768 },
      context(),
    );
    expect(upstream.requests[0]!.body).toEqual({
      requests: [
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'one' }] },
          outputDimensionality: 768,
        },
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'two' }] },
          outputDimensionality: 768,
        },
      ],
    });
  });

  it("sends the deployment's task_type as taskType, and the caller's over it", async () => {
    const configured = embedder({ task_type: 'retrieval_document' });
    await configured.embed({ model: 'gemini-embedding-001', input: 'a' }, context());
    expect(upstream.requests[0]!.body.requests[0].taskType).toBe('RETRIEVAL_DOCUMENT');
    await configured.embed(
      { model: 'gemini-embedding-001', input: 'a', task_type: 'RETRIEVAL_QUERY' },
      context(),
    );
    expect(upstream.requests[1]!.body.requests[0].taskType).toBe('RETRIEVAL_QUERY');
  });

  it("refuses a caller's unknown task_type with a 400 naming it, before any call", async () => {
    const error = await refusal(
      embedder().embed({ model: 'gemini-embedding-001', input: 'a', task_type: 'SEARCH' }, context()),
    );
    expect(error).toMatchObject({ status: 400, param: 'task_type' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('calls the model a wildcard deployment was asked for', async () => {
    await embedder({ model: '*' }).embed({ model: 'text-embedding-004', input: 'a' }, context());
    expect(upstream.requests[0]!.path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    expect(upstream.requests[0]!.body.requests[0].model).toBe('models/text-embedding-004');
  });

  it('maps a recorded-format answer in order and reports no usage (Gemini counts no embedding tokens)', async () => {
    upstream.enqueue({ kind: 'fixture', file: 'batch-embed.json' });
    const result = await embedder().embed({ model: 'gemini-embedding-001', input: ['x', 'y'] }, context());
    const fixture = JSON.parse(readFixture('batch-embed.json'));
    expect(result.response.data.map((item) => item.embedding)).toEqual(
      fixture.embeddings.map((embedding: { values: number[] }) => embedding.values),
    );
    expect(result.usage).toBeUndefined();
    expect(result.units).toBeUndefined();
  });
});

describe('gemini embedding groups in a configuration file', () => {
  const load = (yaml: string) => {
    const providers = builtinProviders();
    const config = parseConfig(yaml, {
      checkDeployment: (deploymentParams, index) => deploymentProblems(deploymentParams, index, providers),
      path: undefined,
      env: {},
      dataDir: '/tmp/switchboard-gemini',
      source: 'gemini-embed.yaml',
    });
    return buildModelRegistry(config, providers, Date.now());
  };

  it('serves gemini/<model> as an embedding group, with a task_type', () => {
    const registry = load(`
model_list:
  - model_name: gemini-embed
    litellm_params: { model: gemini/gemini-embedding-001, api_key: k, task_type: semantic_similarity }
    model_info: { mode: embedding }
`);
    expect(registry.group('gemini-embed')?.deployments[0]?.adapter.embeddings).toBeDefined();
  });

  it('refuses an unknown task_type by name', () => {
    let caught: unknown;
    try {
      load(`
model_list:
  - model_name: gemini-embed
    litellm_params: { model: gemini/gemini-embedding-001, api_key: k, task_type: search }
    model_info: { mode: embedding }
`);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).issues).toEqual([
      'model_list[0].litellm_params.task_type: must be one of TASK_TYPE_UNSPECIFIED, RETRIEVAL_QUERY, RETRIEVAL_DOCUMENT, SEMANTIC_SIMILARITY, CLASSIFICATION, CLUSTERING, QUESTION_ANSWERING, FACT_VERIFICATION, CODE_RETRIEVAL_QUERY',
    ]);
  });
});
