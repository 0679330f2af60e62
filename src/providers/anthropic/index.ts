/** The `anthropic` provider's factory: Anthropic's Messages API, translated to and from chat completions. */
import type { ProviderFactory } from '../provider-adapter.ts';
import { AnthropicAdapter } from './anthropic-adapter.ts';
import { anthropicEndpoint, anthropicParams, validateAnthropicParams } from './anthropic-settings.ts';

export const anthropicProvider: ProviderFactory = {
  name: 'anthropic',
  knownParams: anthropicParams,
  validate: validateAnthropicParams,
  create: (settings) => new AnthropicAdapter(anthropicEndpoint(settings.params), settings),
};

export { AnthropicAdapter, type NativeCompletion, type NativeStreamEvent } from './anthropic-adapter.ts';
