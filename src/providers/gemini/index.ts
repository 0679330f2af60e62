/** The `gemini` provider (Google AI Studio / Gemini API), by LiteLLM's name for it: `gemini/<model>`. */
import type { ProviderFactory } from '../provider-adapter.ts';
import { GeminiAdapter } from './gemini-adapter.ts';
import { geminiParams, validateGeminiParams } from './gemini-settings.ts';

export const geminiProvider: ProviderFactory = {
  name: 'gemini',
  knownParams: geminiParams,
  validate: validateGeminiParams,
  create: (settings) => new GeminiAdapter(settings),
};
