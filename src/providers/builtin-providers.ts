/** The providers this build ships, by name (LiteLLM-style aliases included). */
import { fakeProvider } from './fake/index.ts';
import { ProviderRegistry } from './provider-registry.ts';

export function builtinProviders(): ProviderRegistry {
  return new ProviderRegistry([['fake', fakeProvider]]);
}
