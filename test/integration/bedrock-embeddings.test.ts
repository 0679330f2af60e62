/**
 * Bedrock embeddings through InvokeModel against the fake Bedrock runtime, which verifies every SigV4
 * signature: the embeddings conformance suite for Amazon Titan (one text per call) and Cohere Embed on
 * Bedrock (96 per call), then each family's own fields, recorded-format answers, the bound on calls in
 * flight, and which models and params a configuration may name.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddingRequest } from '../../src/canonical/modalities.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { BedrockAdapter } from '../../src/providers/bedrock/bedrock-adapter.ts';
import { bedrockProvider } from '../../src/providers/bedrock/index.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import { buildModelRegistry, deploymentProblems } from '../../src/routing/model-registry.ts';
import { FAKE_ACCOUNT, FakeBedrockServer } from '../fakes/bedrock/fake-bedrock-server.ts';
import type { RecordedRequest } from '../fakes/loopback-server.ts';
import { runEmbeddingsAdapterSuite } from '../support/embeddings-adapter-suite.ts';
import { refusal } from '../support/gateway-refusal.ts';
import { failure, settingsFor, waitUntil } from '../support/provider-adapter-suite.ts';

const TITAN = 'amazon.titan-embed-text-v2:0';
const COHERE = 'cohere.embed-english-v3';

function fixture(name: string): any {
  return JSON.parse(readFileSync(new URL(`../fakes/bedrock/fixtures/${name}`, import.meta.url), 'utf8'));
}

const params = (origin: string, model: string, overrides: Record<string, unknown> = {}) => ({
  model,
  aws_region_name: FAKE_ACCOUNT.region,
  aws_access_key_id: FAKE_ACCOUNT.accessKeyId,
  aws_secret_access_key: FAKE_ACCOUNT.secretAccessKey,
  api_base: origin,
  ...overrides,
});

function expectSignedInvoke(seen: RecordedRequest, model: string): void {
  expect(seen.method).toBe('POST');
  expect(seen.path).toBe(`/model/${encodeURIComponent(model)}/invoke`);
  expect(seen.headers.authorization).toMatch(
    new RegExp(
      `^AWS4-HMAC-SHA256 Credential=${FAKE_ACCOUNT.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, `,
    ),
  );
  expect(seen.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
  expect(seen.headers.accept).toBe('application/json');
}

runEmbeddingsAdapterSuite({
  name: 'bedrock (Amazon Titan Text Embeddings V2)',
  factory: bedrockProvider,
  startUpstream: () => FakeBedrockServer.start(),
  params: (origin) => params(origin, TITAN),
  expectEndpoint: (seen) => expectSignedInvoke(seen, TITAN),
  textsOf: (seen) => [seen.body.inputText],
  batchSize: 1,
  reportsTokens: true,
  sendsRetryAfter: false,
});

runEmbeddingsAdapterSuite({
  name: 'bedrock (Cohere Embed)',
  factory: bedrockProvider,
  startUpstream: () => FakeBedrockServer.start(),
  params: (origin) => params(origin, COHERE),
  expectEndpoint: (seen) => expectSignedInvoke(seen, COHERE),
  textsOf: (seen) => seen.body.texts,
  batchSize: 96,
  reportsTokens: true,
  sendsRetryAfter: false,
});

const context = () => ({ signal: new AbortController().signal, requestId: 'req-bedrock-embed' });

describe('bedrock embeddings: each family’s fields', () => {
  let upstream: FakeBedrockServer;
  const adapters: BedrockAdapter[] = [];
  const embedder = (model: string, overrides: Record<string, unknown> = {}) => {
    const adapter = new BedrockAdapter(settingsFor(params(upstream.origin, model, overrides)));
    adapters.push(adapter);
    if (!adapter.embeddings) throw new Error(`no embeddings for ${model}`);
    return adapter.embeddings;
  };
  const embed = (model: string, input: string[], extra: Partial<EmbeddingRequest> = {}) => ({
    model,
    input,
    ...extra,
  });

  beforeAll(async () => {
    upstream = await FakeBedrockServer.start();
  });
  afterAll(async () => {
    await Promise.all(adapters.map((adapter) => adapter.close()));
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  it('sends Titan V2 dimensions and normalize (the deployment’s, the caller’s over it)', async () => {
    const titan = embedder(TITAN, { normalize: false });
    await titan.embed(embed(TITAN, ['a'], { dimensions: 256 }), context());
    expect(upstream.requests[0]!.body).toEqual({ inputText: 'a', dimensions: 256, normalize: false });
    await titan.embed(embed(TITAN, ['b'], { normalize: true }), context());
    expect(upstream.requests[1]!.body).toEqual({ inputText: 'b', normalize: true });
    expect(upstream.refused).toEqual([]);
  });

  it('sends Titan G1 Text only inputText, refusing dimensions and normalize with a 400 naming them', async () => {
    const g1 = embedder('amazon.titan-embed-text-v1');
    await g1.embed(embed('amazon.titan-embed-text-v1', ['a']), context());
    expect(upstream.requests[0]!.body).toEqual({ inputText: 'a' });
    const sized = await refusal(
      g1.embed(embed('amazon.titan-embed-text-v1', ['a'], { dimensions: 8 }), context()),
    );
    expect(sized).toMatchObject({ status: 400, param: 'dimensions' });
    const normalized = await refusal(
      g1.embed(embed('amazon.titan-embed-text-v1', ['a'], { normalize: true }), context()),
    );
    expect(normalized).toMatchObject({ status: 400, param: 'normalize' });
    expect(upstream.requests).toHaveLength(1);
  });

  it('sends the Titan multimodal model dimensions as embeddingConfig.outputEmbeddingLength', async () => {
    await embedder('amazon.titan-embed-image-v1').embed(
      embed('amazon.titan-embed-image-v1', ['a'], { dimensions: 384 }),
      context(),
    );
    expect(upstream.requests[0]!.body).toEqual({
      inputText: 'a',
      embeddingConfig: { outputEmbeddingLength: 384 },
    });
  });

  it('sends Cohere Embed texts with input_type (caller, deployment, else search_document) and float types', async () => {
    const cohere = embedder(COHERE, { input_type: 'classification', truncate: 'END' });
    await cohere.embed(embed(COHERE, ['a', 'b']), context());
    expect(upstream.requests[0]!.body).toEqual({
      texts: ['a', 'b'],
      input_type: 'classification',
      embedding_types: ['float'],
      truncate: 'END',
    });
    await cohere.embed(embed(COHERE, ['c'], { input_type: 'search_query', truncate: 'none' }), context());
    expect(upstream.requests[1]!.body).toMatchObject({ input_type: 'search_query', truncate: 'NONE' });
    await embedder(COHERE).embed(embed(COHERE, ['d']), context());
    expect(upstream.requests[2]!.body.input_type).toBe('search_document');
  });

  it('sends dimensions as output_dimension to Cohere Embed v4 (an inference profile too), refusing it for v3', async () => {
    const profile = 'us.cohere.embed-v4:0';
    await embedder(profile).embed(embed(profile, ['a'], { dimensions: 1024 }), context());
    expect(upstream.requests[0]!.path).toBe(`/model/${encodeURIComponent(profile)}/invoke`);
    expect(upstream.requests[0]!.body.output_dimension).toBe(1024);
    const v3 = await refusal(embedder(COHERE).embed(embed(COHERE, ['a'], { dimensions: 1024 }), context()));
    expect(v3).toMatchObject({ status: 400, param: 'dimensions' });
    const badType = await refusal(
      embedder(COHERE).embed(embed(COHERE, ['a'], { input_type: 'query' }), context()),
    );
    expect(badType).toMatchObject({ status: 400, param: 'input_type' });
  });

  it('maps a recorded Titan answer: its embedding, its inputTextTokenCount as usage', async () => {
    upstream.enqueue({ kind: 'invoke-json', body: fixture('titan-embed-text-v2.json') });
    const result = await embedder(TITAN).embed(embed(TITAN, ['the tide turns']), context());
    expect(result.response.data[0]!.embedding).toEqual(fixture('titan-embed-text-v2.json').embedding);
    expect(result.usage).toEqual({ prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 });
  });

  it('maps a recorded Cohere v3 answer (a plain list of floats), tokens from the Bedrock header', async () => {
    upstream.enqueue({ kind: 'invoke-json', body: fixture('cohere-embed-v3-floats.json'), inputTokens: 7 });
    const result = await embedder(COHERE).embed(
      embed(COHERE, ['lighthouse keeper', 'storm over the bay']),
      context(),
    );
    expect(result.response.data.map((item) => item.embedding)).toEqual(
      fixture('cohere-embed-v3-floats.json').embeddings,
    );
    expect(result.usage?.prompt_tokens).toBe(7);
  });

  it('reports no usage when Bedrock reports no Cohere tokens (never an estimate)', async () => {
    upstream.enqueue({ kind: 'invoke-json', body: fixture('cohere-embed-v3-floats.json') });
    const result = await embedder(COHERE).embed(embed(COHERE, ['x', 'y']), context());
    expect(result.usage).toBeUndefined();
  });

  it('keeps at most four Titan calls in flight', async () => {
    const titan = embedder(TITAN);
    upstream.enqueue({ kind: 'hang' }, { kind: 'hang' }, { kind: 'hang' }, { kind: 'hang' });
    const controller = new AbortController();
    const texts = Array.from({ length: 10 }, (_, index) => `t${index}`);
    const pending = titan.embed(embed(TITAN, texts), { signal: controller.signal, requestId: 'r' });
    await waitUntil(() => upstream.requests.length >= 4);
    // A full round trip through the same fake: calls the adapter had started would have arrived by now.
    await embedder(TITAN).embed(embed(TITAN, ['probe']), context());
    expect(upstream.requests.filter((seen) => seen.body.inputText !== 'probe')).toHaveLength(4);
    controller.abort();
    expect((await failure(pending)).kind).toBe('aborted');
  });
});

describe('bedrock embedding models in a configuration file', () => {
  const load = (entry: string) => {
    const providers = builtinProviders();
    const config = parseConfig(
      `model_list:\n  - model_name: e\n    litellm_params: { aws_region_name: us-east-1, ${entry} }\n    model_info: { mode: embedding }\n`,
      {
        checkDeployment: (deploymentParams, index) => deploymentProblems(deploymentParams, index, providers),
        path: undefined,
        env: {},
        dataDir: '/tmp/switchboard-bedrock',
        source: 'bedrock-embed.yaml',
      },
    );
    return buildModelRegistry(config, providers, Date.now());
  };
  const issues = (entry: string): readonly string[] => {
    try {
      load(entry);
    } catch (error) {
      if (error instanceof ConfigError) return error.issues;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  it('serves bedrock/<Titan or Cohere embed id> as an embedding group', () => {
    for (const model of [TITAN, COHERE, 'eu.cohere.embed-v4:0', 'amazon.titan-embed-g1-text-02']) {
      const registry = load(`model: bedrock/${model}`);
      expect(registry.group('e')?.deployments[0]?.adapter.embeddings, model).toBeDefined();
    }
  });

  it('refuses a chat model under mode embedding, saying what it serves', () => {
    expect(issues('model: bedrock/amazon.titan-text-express-v1')).toEqual([
      "model_list[0].model_info.mode: 'embedding' needs the embeddings capability, which provider 'bedrock' does not serve for model 'amazon.titan-text-express-v1' (it serves model_info.mode chat, completion, responses)",
    ]);
  });

  it('refuses an embedding model of another family, and embedding params on the wrong model, by name', () => {
    expect(issues('model: bedrock/twelvelabs.marengo-embed-2-7-v1:0')).toEqual([
      "model_list[0].litellm_params.model: 'twelvelabs.marengo-embed-2-7-v1:0' is not an embedding model Switchboard calls on Bedrock (amazon.titan-embed-text-v2, amazon.titan-embed-text-v1, amazon.titan-embed-g1-text, amazon.titan-embed-image-v1, cohere.embed-*)",
    ]);
    expect(issues(`model: bedrock/${COHERE}, normalize: true`)).toEqual([
      'model_list[0].litellm_params.normalize: only Titan Text Embeddings V2 embedding models take it',
    ]);
    expect(issues(`model: bedrock/${TITAN}, input_type: search_query, truncate: END`)).toEqual([
      'model_list[0].litellm_params.input_type: only Cohere Embed embedding models take it',
      'model_list[0].litellm_params.truncate: only Cohere Embed embedding models take it',
    ]);
    expect(issues(`model: bedrock/${TITAN}, normalize: yes please`)).toEqual([
      'model_list[0].litellm_params.normalize: must be true or false',
    ]);
  });
});
