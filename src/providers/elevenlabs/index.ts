/** The `elevenlabs` provider's factory: ElevenLabs text to speech and speech to text. */
import type { ProviderFactory } from '../provider-adapter.ts';
import { ElevenLabsAdapter } from './elevenlabs-adapter.ts';
import { elevenLabsEndpoint, elevenLabsParams, validateElevenLabsParams } from './elevenlabs-settings.ts';

export const elevenLabsProvider: ProviderFactory = {
  name: 'elevenlabs',
  knownParams: elevenLabsParams,
  validate: validateElevenLabsParams,
  create: (settings) => new ElevenLabsAdapter(elevenLabsEndpoint(settings.params), settings),
};

export { ElevenLabsAdapter } from './elevenlabs-adapter.ts';
