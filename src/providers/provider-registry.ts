/** Provider factories by name. Lookup is a registry, never a switch on provider names. */
import type { ProviderFactory } from './provider-adapter.ts';

export class ProviderRegistry {
  private readonly factories = new Map<string, ProviderFactory>();

  constructor(factories: Iterable<readonly [name: string, factory: ProviderFactory]>) {
    for (const [name, factory] of factories) this.factories.set(name, factory);
  }

  get(name: string): ProviderFactory | undefined {
    return this.factories.get(name);
  }

  names(): string[] {
    return [...this.factories.keys()].sort();
  }
}
