import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { parseConfig } from './load-config.ts';

const base = { env: {}, dataDir: '/tmp/switchboard-data', path: undefined, source: 'test.yaml' };
const withCache = (settings: string) => `general_settings:\n  response_cache: ${settings}\n`;

function issuesOf(yaml: string): readonly string[] {
  try {
    parseConfig(yaml, base);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected the configuration to be rejected');
}

describe('response cache key fields (nothing inert)', () => {
  it('takes any request field in ignored_key_fields, and a default-unkeyed one in extra_key_fields', () => {
    const config = parseConfig(
      withCache('{ ignored_key_fields: [user, seed], extra_key_fields: [metadata] }'),
      base,
    );
    expect(config.general_settings.response_cache).toMatchObject({
      ignored_key_fields: ['user', 'seed'],
      extra_key_fields: ['metadata'],
    });
    expect(config.warnings.filter((warning) => warning.includes('response_cache'))).toEqual([]);
  });

  it('refuses fields that are always or never part of the key, and a field in both lists', () => {
    expect(issuesOf(withCache('{ ignored_key_fields: [model, stream], extra_key_fields: [cache] }'))).toEqual(
      [
        "general_settings.response_cache.extra_key_fields[0]: 'cache' is the per-request cache control and never part of the key",
        "general_settings.response_cache.ignored_key_fields[0]: 'model' is always part of the key (the key's model segment)",
        "general_settings.response_cache.ignored_key_fields[1]: 'stream' is always part of the key (the answer's kind: JSON or stream)",
      ],
    );
    expect(issuesOf(withCache('{ ignored_key_fields: [user], extra_key_fields: [user] }'))).toEqual([
      "general_settings.response_cache.extra_key_fields[0]: 'user' is also in ignored_key_fields; name it in one list only",
    ]);
    expect(issuesOf(withCache('{ ignored_key_fields: [""] }'))[0]).toMatch(
      /ignored_key_fields\/0|ignored_key_fields\[0\]/,
    );
  });

  it('warns about entries that change nothing since every field is hashed', () => {
    const config = parseConfig(
      withCache('{ extra_key_fields: [presence_penalty], ignored_key_fields: [stream_options] }'),
      base,
    );
    expect(config.warnings.filter((warning) => warning.includes('response_cache'))).toEqual([
      "general_settings.response_cache.extra_key_fields[0]: 'presence_penalty' is part of the cache key already (every request field is, except stream_options and metadata); remove it",
      "general_settings.response_cache.ignored_key_fields[0]: 'stream_options' is left out of the cache key by default; remove it",
    ]);
  });
});
