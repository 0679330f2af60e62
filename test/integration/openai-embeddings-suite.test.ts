/**
 * The shared embeddings conformance suite (STYLE convention 13) run against the OpenAI-style adapters:
 * `openai` (bearer key, `<base>/embeddings`, base64 asked upstream whatever the caller wants),
 * `hosted_vllm` (an OpenAI-compatible server, asked in the caller's encoding) and `azure` (its deployment
 * path and `api-key`), each against the fake OpenAI upstream answering the suite's vectors and tokens.
 */
import { expect } from 'vitest';
import { azureProvider } from '../../src/providers/azure/index.ts';
import { openAiCompatibleProviders } from '../../src/providers/openai/index.ts';
import type { ProviderFactory } from '../../src/providers/provider-adapter.ts';
import { FakeOpenAiServer, type Scenario } from '../fakes/fake-openai-server.ts';
import { suiteUpstream } from '../support/capability-suite-kit.ts';
import {
  type EmbeddingScenario,
  type FakeEmbeddingsUpstream,
  fakeTokens,
  fakeVector,
  runEmbeddingsAdapterSuite,
} from '../support/embeddings-adapter-suite.ts';

const providers = new Map(openAiCompatibleProviders());

/** The suite's scenarios in the fake OpenAI upstream's terms (its error body carries the secret). */
function toScenario(scenario: EmbeddingScenario): Scenario {
  switch (scenario.kind) {
    case 'error':
      return {
        kind: 'error',
        status: scenario.status,
        ...(scenario.secret ? { message: scenario.secret } : {}),
        ...(scenario.retryAfterSeconds !== undefined
          ? { headers: { 'retry-after': String(scenario.retryAfterSeconds) } }
          : {}),
      };
    case 'short-embeddings':
      return { kind: 'answer', dropLastEmbedding: true };
    default:
      return scenario;
  }
}

/** The fake OpenAI upstream answering `fakeVector` and `fakeTokens` of each input. */
async function startUpstream(): Promise<FakeEmbeddingsUpstream> {
  const server = await FakeOpenAiServer.start();
  const text = (input: string | number[]) => (typeof input === 'string' ? input : input.join(' '));
  server.embedder = {
    vector: (input) => fakeVector(text(input)),
    tokens: (input) => fakeTokens(text(input)),
  };
  return suiteUpstream(server, (scenario: EmbeddingScenario) => server.enqueue(toScenario(scenario)));
}

const inputsOf = (seen: { body: any }) =>
  typeof seen.body.input === 'string' ? [seen.body.input] : seen.body.input;

const openAiStyle = {
  startUpstream,
  textsOf: inputsOf,
  batchSize: undefined,
  takesTokenArrays: true,
  reportsTokens: true,
  sendsRetryAfter: true,
};

runEmbeddingsAdapterSuite({
  ...openAiStyle,
  name: 'openai',
  factory: providers.get('openai') as ProviderFactory,
  params: (origin) => ({ model: 'text-embedding-3-small', api_base: `${origin}/v1`, api_key: 'sk-upstream' }),
  expectEndpoint(seen) {
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/v1/embeddings');
    expect(seen.headers.authorization).toBe('Bearer sk-upstream');
  },
  upstreamEncoding: 'base64',
});

runEmbeddingsAdapterSuite({
  ...openAiStyle,
  name: 'hosted_vllm',
  factory: providers.get('hosted_vllm') as ProviderFactory,
  params: (origin) => ({ model: 'bge-m3', api_base: `${origin}/v1` }),
  expectEndpoint(seen) {
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/v1/embeddings');
  },
  upstreamEncoding: 'caller',
});

runEmbeddingsAdapterSuite({
  ...openAiStyle,
  name: 'azure',
  factory: azureProvider,
  params: (origin) => ({
    model: 'embed-deployment',
    api_base: origin,
    api_key: 'azure-key',
    api_version: '2024-06-01',
  }),
  expectEndpoint(seen) {
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/openai/deployments/embed-deployment/embeddings?api-version=2024-06-01');
    expect(seen.headers['api-key']).toBe('azure-key');
  },
  upstreamEncoding: 'base64',
});
