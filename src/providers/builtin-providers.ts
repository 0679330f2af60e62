/** The providers this build ships, by name (LiteLLM's names for OpenAI-compatible servers included). */
import { anthropicProvider } from './anthropic/index.ts';
import { azureProvider } from './azure/index.ts';
import { bedrockProvider } from './bedrock/index.ts';
import { cohereProvider } from './cohere/index.ts';
import { elevenLabsProvider } from './elevenlabs/index.ts';
import { fakeProvider } from './fake/index.ts';
import { geminiProvider } from './gemini/index.ts';
import { openAiCompatibleProviders } from './openai/index.ts';
import { ProviderRegistry } from './provider-registry.ts';

export function builtinProviders(): ProviderRegistry {
  return new ProviderRegistry([
    ['fake', fakeProvider],
    ['azure', azureProvider],
    ['bedrock', bedrockProvider],
    ['gemini', geminiProvider],
    ['anthropic', anthropicProvider],
    ['cohere', cohereProvider],
    ['elevenlabs', elevenLabsProvider],
    ...openAiCompatibleProviders(),
  ]);
}
