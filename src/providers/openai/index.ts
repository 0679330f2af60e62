/**
 * The `openai` provider and the OpenAI-compatible servers that share its wire format, by the names
 * LiteLLM uses for them, each with its default base URL (or none, when the server is self-hosted) and
 * the path its OpenAI routes live under when `api_base` names only the server (Ollama serves them under
 * `/v1`, and LiteLLM users write `api_base: http://localhost:11434`).
 */
import type { ProviderFactory } from '../provider-adapter.ts';
import { OpenAiCompatibleAdapter } from './openai-compatible-adapter.ts';
import { openAiEndpoint, openAiParams, validateOpenAiParams } from './openai-settings.ts';

const compatibleServers: ReadonlyArray<
  readonly [name: string, defaultApiBase: string | undefined, pathOfBareServer?: string]
> = [
  ['openai', 'https://api.openai.com/v1'],
  ['groq', 'https://api.groq.com/openai/v1'],
  ['together_ai', 'https://api.together.xyz/v1'],
  ['mistral', 'https://api.mistral.ai/v1'],
  ['deepseek', 'https://api.deepseek.com/v1'],
  ['openrouter', 'https://openrouter.ai/api/v1'],
  ['fireworks_ai', 'https://api.fireworks.ai/inference/v1'],
  ['xai', 'https://api.x.ai/v1'],
  ['perplexity', 'https://api.perplexity.ai'],
  ['ollama', 'http://127.0.0.1:11434/v1', '/v1'],
  ['ollama_chat', 'http://127.0.0.1:11434/v1', '/v1'],
  ['lm_studio', 'http://127.0.0.1:1234/v1'],
  ['hosted_vllm', undefined],
  ['vllm', undefined],
  ['llamacpp', undefined],
  ['openai_compatible', undefined],
];

/**
 * Servers asked for base64 embeddings when the caller wants floats (a quarter of the bytes): OpenAI
 * answers it; not every OpenAI-compatible server does.
 */
const base64EmbeddingServers = new Set(['openai']);

export function openAiCompatibleProviders(): Array<readonly [string, ProviderFactory]> {
  return compatibleServers.map(([name, defaultApiBase, pathOfBareServer]) => [
    name,
    {
      name,
      knownParams: openAiParams,
      validate: (params) => validateOpenAiParams(params, defaultApiBase === undefined),
      create: (settings) =>
        new OpenAiCompatibleAdapter(
          openAiEndpoint(settings.params, defaultApiBase ?? '', pathOfBareServer),
          settings,
          { base64Upstream: base64EmbeddingServers.has(name) },
        ),
    },
  ]);
}
