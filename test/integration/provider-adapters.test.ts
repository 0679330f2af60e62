/** The ProviderAdapter conformance suite against the OpenAI and Azure wire formats (fake upstream). */
import { describe, expect, it } from 'vitest';
import { azureProvider } from '../../src/providers/azure/index.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import { openAiCompatibleProviders } from '../../src/providers/openai/index.ts';
import { runProviderAdapterSuite } from '../support/provider-adapter-suite.ts';

const openai = Object.fromEntries(openAiCompatibleProviders()).openai!;

runProviderAdapterSuite({
  name: 'openai',
  factory: openai,
  params: (origin) => ({
    provider: 'openai',
    model: 'upstream-model',
    api_base: `${origin}/v1`,
    api_key: 'sk-upstream',
    organization: 'org-1',
  }),
  expectedPath: '/v1/chat/completions',
  expectAuth: (headers) => {
    expect(headers.authorization).toBe('Bearer sk-upstream');
    expect(headers['openai-organization']).toBe('org-1');
  },
});

runProviderAdapterSuite({
  name: 'azure',
  factory: azureProvider,
  params: (origin) => ({
    provider: 'azure',
    model: 'upstream-model',
    api_base: origin,
    api_key: 'azure-key',
    api_version: '2024-06-01',
  }),
  expectedPath: '/openai/deployments/upstream-model/chat/completions?api-version=2024-06-01',
  expectAuth: (headers) => {
    expect(headers['api-key']).toBe('azure-key');
    expect(headers.authorization).toBeUndefined();
  },
});

describe('provider registry', () => {
  it('offers OpenAI-compatible servers under their LiteLLM names, requiring api_base for self-hosted ones', () => {
    const registry = builtinProviders();
    for (const name of ['openai', 'azure', 'fake', 'groq', 'ollama', 'hosted_vllm', 'openrouter'])
      expect(registry.get(name), name).toBeDefined();
    expect(registry.get('hosted_vllm')!.validate({ model: 'm' })).toEqual([
      expect.stringContaining('api_base: is required'),
    ]);
    expect(registry.get('groq')!.validate({ model: 'm' })).toEqual([]);
    expect(azureProvider.validate({ model: 'm' })).toEqual([
      expect.stringContaining('api_base: is required'),
    ]);
  });
});
