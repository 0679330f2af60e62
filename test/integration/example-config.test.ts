/** switchboard.example.yaml, the file users start from, must load and validate (providers included). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import { buildModelRegistry } from '../../src/routing/model-registry.ts';

describe('switchboard.example.yaml', () => {
  it('loads with its secrets in the environment and builds every deployment', async () => {
    const config = parseConfig(readFileSync('switchboard.example.yaml', 'utf8'), {
      path: undefined,
      source: 'switchboard.example.yaml',
      dataDir: '/tmp/example',
      env: {
        OPENAI_API_KEY: 'sk-a',
        AZURE_OPENAI_API_KEY: 'az',
        SWITCHBOARD_MASTER_KEY: 'sk-master-example',
      },
    });
    expect(config.warnings).toEqual([]);
    const registry = buildModelRegistry(config, builtinProviders(), Date.now());
    expect(registry.groups().map((group) => [group.name, group.deployments.length])).toEqual([
      ['gpt-4o-mini', 2],
      ['demo', 1],
    ]);
    await registry.close();
  });

  it('names the missing secret when its variable is not set', () => {
    expect(() =>
      parseConfig(readFileSync('switchboard.example.yaml', 'utf8'), {
        path: undefined,
        source: 'example',
        dataDir: '/tmp',
        env: {},
      }),
    ).toThrow(/model_list\[0\]\.params\.api_key: environment variable OPENAI_API_KEY is not set/);
  });
});
