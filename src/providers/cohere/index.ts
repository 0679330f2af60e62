/** The `cohere` provider (Cohere's v2 API: embed and rerank), by LiteLLM's name for it: `cohere/<model>`. */
import type { ProviderFactory } from '../provider-adapter.ts';
import { CohereAdapter } from './cohere-adapter.ts';
import { cohereParams, validateCohereParams } from './cohere-settings.ts';

export const cohereProvider: ProviderFactory = {
  name: 'cohere',
  knownParams: cohereParams,
  validate: validateCohereParams,
  create: (settings) => new CohereAdapter(settings),
};
