/** The `bedrock` provider's factory (AWS Bedrock runtime, Converse API, SigV4). */
import type { ProviderFactory } from '../provider-adapter.ts';
import { BedrockAdapter } from './bedrock-adapter.ts';
import { bedrockParams, validateBedrockParams } from './bedrock-settings.ts';

export const bedrockProvider: ProviderFactory = {
  name: 'bedrock',
  knownParams: bedrockParams,
  validate: validateBedrockParams,
  create: (settings) => new BedrockAdapter(settings),
};
