import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error.ts';
import { parseConfig } from '../config/load-config.ts';
import type { ProviderAdapter, ProviderFactory } from '../providers/provider-adapter.ts';
import { ProviderRegistry } from '../providers/provider-registry.ts';
import { buildModelRegistry } from './model-registry.ts';

/** A provider whose adapters declare no capability (as an embeddings-only provider would for chat). */
const silent: ProviderFactory = {
  name: 'silent',
  knownParams: [],
  validate: () => [],
  create: (): ProviderAdapter => ({ close: async () => {} }),
};

const config = (mode: string) =>
  parseConfig(
    `model_list:\n  - model_name: m\n    params: { provider: silent, model: x }\n    model_info: { mode: ${mode} }\n`,
    {
      env: {},
      dataDir: '/tmp/switchboard-data',
      path: undefined,
      source: 'test.yaml',
    },
  );

describe('model registry capabilities', () => {
  it('refuses a text group whose provider declares no chat capability, naming the mode and provider', () => {
    let caught: unknown;
    try {
      buildModelRegistry(config('chat'), new ProviderRegistry([['silent', silent]]), 0);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).issues).toEqual([
      "model_list[0].model_info.mode: 'chat' needs the chat capability, which provider 'silent' does not serve",
    ]);
  });

  it.each([
    ['embedding', 'embeddings'],
    ['image_generation', 'images'],
    ['audio_speech', 'speech'],
    ['audio_transcription', 'transcription'],
    ['rerank', 'rerank'],
  ])('refuses a %s group whose provider lacks the %s capability', (mode, capability) => {
    expect(() => buildModelRegistry(config(mode), new ProviderRegistry([['silent', silent]]), 0)).toThrow(
      `'${mode}' needs the ${capability} capability, which provider 'silent' does not serve`,
    );
  });

  it('lists a group of a mode no capability serves (moderation), whatever its adapter declares', () => {
    const registry = buildModelRegistry(config('moderation'), new ProviderRegistry([['silent', silent]]), 0);
    expect(registry.group('m')?.mode).toBe('moderation');
  });
});
