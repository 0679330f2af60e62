/** The `fake` provider's factory. */
import type { ProviderFactory } from '../provider-adapter.ts';
import { FakeAdapter } from './fake-adapter.ts';
import { fakeParams, validateFakeParams } from './fake-settings.ts';

export const fakeProvider: ProviderFactory = {
  name: 'fake',
  knownParams: fakeParams,
  validate: validateFakeParams,
  create: (settings) => new FakeAdapter(settings),
};
