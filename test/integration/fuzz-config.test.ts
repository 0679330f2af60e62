/**
 * Configuration loading, fuzzed (issue 18): any value for any known key (general_settings,
 * router_settings, a deployment's params and model_info, an MCP server; the list is read from the
 * schemas, so a new key is fuzzed without editing this file), and arbitrary YAML text, either load or
 * fail with a ConfigError that names the key; never another kind of exception. The CLI's provider
 * checks run too (checkDeployment), as at start.
 * A failure prints its seed and path: FUZZ_SEED=… FUZZ_PATH=… replays it.
 */
import fc from 'fast-check';
import type { TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.ts';
import {
  GeneralSettingsSchema,
  McpServerSchema,
  ModelInfoSchema,
  ModelParamsSchema,
  RouterSettingsSchema,
} from '../../src/config/config-schema.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import { deploymentProblems } from '../../src/routing/model-registry.ts';
import { fuzzParameters } from '../support/fuzz-parameters.ts';

const providers = builtinProviders();
const options = {
  path: undefined,
  env: { FUZZ_SET: 'value' },
  dataDir: '/nonexistent',
  source: 'fuzz',
  checkDeployment: (params: Readonly<Record<string, unknown>>, index: number) =>
    deploymentProblems(params, index, providers),
};

const keysOf = (schema: TSchema) => Object.keys((schema as { properties?: object }).properties ?? {});

/** An otherwise valid file (JSON is YAML) with `key` set to `value` in `section`. */
function fileWith(section: string, key: string, value: unknown): string {
  const params: Record<string, unknown> = { provider: 'fake', model: 'demo' };
  const info: Record<string, unknown> = { id: 'demo-fake' };
  const file: Record<string, unknown> = { model_list: [{ model_name: 'demo', params, model_info: info }] };
  if (section === 'params') params[key] = value;
  else if (section === 'model_info') info[key] = value;
  else if (section === 'mcp_servers')
    file.mcp_servers = [{ server_key: 's', base_url: 'http://127.0.0.1:9/mcp', [key]: value }];
  else file[section] = { [key]: value };
  return JSON.stringify(file);
}

const placements = fc.oneof(
  ...(
    [
      ['general_settings', GeneralSettingsSchema],
      ['router_settings', RouterSettingsSchema],
      ['params', ModelParamsSchema],
      ['model_info', ModelInfoSchema],
      ['mcp_servers', McpServerSchema],
    ] as const
  ).map(([section, schema]) => fc.tuple(fc.constant(section), fc.constantFrom(...keysOf(schema)))),
);
const value = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>(
    '\u0000',
    '\ud800',
    -1,
    0,
    1e308,
    -0,
    '9'.repeat(400),
    'os.environ/FUZZ_MISSING',
    'os.environ/FUZZ_SET',
    'http://[::1',
    'yes',
    '',
  ),
);

/** Loads, or fails as configuration errors must; returns the error for further checks. */
function load(text: string): ConfigError | undefined {
  try {
    parseConfig(text, options);
    return undefined;
  } catch (error) {
    expect(error, String((error as Error)?.stack)).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
}

describe('configuration loading under arbitrary input (issue 18: a ConfigError naming the key, nothing else)', () => {
  it('loads or names the key for any value of any known key', () => {
    fc.assert(
      fc.property(placements, value, ([section, key], candidate) => {
        const error = load(fileWith(section, key, candidate));
        if (error) expect(error.message).toContain(key);
      }),
      fuzzParameters(600),
    );
  });

  it('loads or fails with a ConfigError for arbitrary YAML text', () => {
    // Found by this property: an alias without its anchor escaped as the yaml library's ReferenceError.
    expect(load('*a')).toBeInstanceOf(ConfigError);
    expect(load('model_list: *missing\n')).toBeInstanceOf(ConfigError);
    const yamlish = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc
        .array(
          fc.constantFrom(
            'model_list:',
            '  - ',
            'general_settings:',
            '  master_key: ',
            '&a ',
            '*a',
            '!!binary ',
            '? ',
            '[',
            '{',
            '"',
            "'",
            '\n',
            '  ',
            'x',
            ': ',
            '---\n',
            '%YAML 1.2\n',
            '<<: *a',
            '\t',
            '#',
          ),
          {
            maxLength: 40,
          },
        )
        .map((pieces) => pieces.join('')),
    );
    fc.assert(
      fc.property(yamlish, (text) => {
        load(text);
      }),
      fuzzParameters(600),
    );
  });
});
