import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { loadConfig, parseConfig } from './load-config.ts';

const base = { env: {}, dataDir: '/tmp/switchboard-data', path: undefined, source: 'test.yaml' };

function issuesOf(yaml: string, env: Record<string, string> = {}): readonly string[] {
  try {
    parseConfig(yaml, { ...base, env });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected the configuration to be rejected');
}

describe('configuration loading', () => {
  it('refuses a setting value whose behaviour is not built (nothing inert), and takes the built ones', () => {
    expect(issuesOf('general_settings:\n  tier_policy_mode: shadow\n')).toEqual([
      'general_settings.tier_policy_mode: "shadow" is not built (tier limits would be neither enforced nor measured); use "off" or "enforce"',
    ]);
    expect(
      parseConfig('general_settings:\n  embeddings_batch_enabled: true\n', { ...base }).general_settings
        .embeddings_batch_enabled,
    ).toBe(true);
    expect(
      parseConfig('general_settings:\n  spend_ingestion_mode: outbox\n', { ...base }).general_settings
        .spend_ingestion_mode,
    ).toBe('outbox');
  });

  it('takes batch_file_store as database or an absolute directory, and defaults the batch file limit', () => {
    expect(issuesOf('general_settings:\n  batch_file_store: relative/dir\n')).toEqual([
      "general_settings.batch_file_store: must be 'database' or an absolute directory path",
    ]);
    const general = parseConfig('general_settings:\n  batch_file_store: /srv/batch-files\n', {
      ...base,
    }).general_settings;
    expect(general.batch_file_store).toBe('/srv/batch-files');
    expect(general.batch_file_max_bytes).toBe(200 * 1024 * 1024);
    expect(parseConfig('model_list: []', { ...base }).general_settings.batch_file_store).toBe('database');
  });

  it("reads LiteLLM's aws_bedrock_runtime_endpoint as the deployment's api_base, under the URL policy", () => {
    const config = parseConfig(
      'model_list:\n  - model_name: b\n    litellm_params:\n      model: bedrock/anthropic.claude-test\n      aws_region_name: us-east-1\n      aws_bedrock_runtime_endpoint: https://bedrock.internal.example\n',
      { ...base },
    );
    expect(config.model_list[0]!.params).toMatchObject({
      provider: 'bedrock',
      api_base: 'https://bedrock.internal.example',
    });
    expect(() =>
      parseConfig(
        'model_list:\n  - model_name: b\n    litellm_params:\n      model: bedrock/m\n      aws_region_name: us-east-1\n      aws_bedrock_runtime_endpoint: http://169.254.169.254/\n',
        { ...base },
      ),
    ).toThrow(/litellm_params\.aws_bedrock_runtime_endpoint/);
  });

  it("turns the response cache on from LiteLLM's litellm_settings.cache and cache_params.ttl", () => {
    const config = parseConfig(
      'litellm_settings:\n  cache: true\n  cache_params: { type: redis, ttl: 120 }\n',
      {
        ...base,
      },
    );
    expect(config.general_settings.response_cache).toMatchObject({
      enabled: true,
      ttl_seconds: 120,
      scope: 'team',
    });
    expect(parseConfig('model_list: []', { ...base }).general_settings.response_cache.enabled).toBe(false);
  });

  it('warns that an empty file configures no model', () => {
    expect(parseConfig('', { ...base }).warnings).toEqual([
      'no model is configured: add model_list entries (see switchboard.example.yaml); /v1 has nothing to serve',
    ]);
  });

  it('warns once per descriptive model_info key that nothing reads, and not about prices', () => {
    const config = parseConfig(
      'model_list:\n  - { model_name: a, params: { provider: fake, model: a }, model_info: { supports_vision: true, input_cost_per_token: 0.1, base_model: gpt-4o } }\n  - { model_name: b, params: { provider: fake, model: b }, model_info: { supports_vision: false } }\n',
      { ...base },
    );
    expect(config.warnings).toEqual([
      'model_info.supports_vision (2 deployments) is not read by Switchboard: descriptive only',
    ]);
  });

  it('refuses a negative model_info price, naming its path', () => {
    expect(
      issuesOf(
        'model_list:\n  - { model_name: a, params: { provider: fake, model: a }, model_info: { cache_read_input_token_cost: -1 } }\n',
      ).join('\n'),
    ).toMatch(/model_list\[0\]\.model_info\.cache_read_input_token_cost/);
  });

  it('reports every problem of a file, however many, and never starts with one (issue 10)', () => {
    const unknown = Array.from({ length: 19 }, (_, index) => `  unknown_key_${index}: 1`).join('\n');
    const issues = issuesOf(
      `general_settings:\n${unknown}\n  max_request_body_bytes: not-a-number\nrouter_settings:\n  num_retries: -1\n`,
    );
    expect(issues).toHaveLength(21);
    // The known keys are listed in schema order (not spelled out here: every new key would change it).
    expect(
      issues.find((issue) => issue.startsWith('general_settings.unknown_key_18: unknown key (known keys: ')),
    ).toMatch(/\(known keys: master_key, salt_key, database_url, .*, audit_retention_days[,)]/);
    expect(issues.some((issue) => issue.startsWith('general_settings.max_request_body_bytes:'))).toBe(true);
    expect(issues.some((issue) => issue.startsWith('router_settings.num_retries:'))).toBe(true);
  });

  it('serves the demo model (and a demo embedding model) from the fake provider when there is no file', () => {
    const config = loadConfig({ path: undefined, env: {}, dataDir: '/data' });
    expect(config.source).toBe('embedded default');
    expect(config.model_list).toEqual([
      expect.objectContaining({ model_name: 'demo', params: { provider: 'fake', model: 'demo' } }),
      expect.objectContaining({
        model_name: 'demo-embedding',
        params: { provider: 'fake', model: 'demo-embedding' },
        model_info: expect.objectContaining({ mode: 'embedding' }),
      }),
    ]);
    expect(config.general_settings.database_url).toBe(join('/data', 'switchboard.db'));
    expect(config.general_settings.redis_url).toBeUndefined();
  });

  it('applies the documented defaults', () => {
    const config = parseConfig('model_list: []', { ...base });
    expect(config.router_settings).toMatchObject({
      routing_strategy: 'simple-shuffle',
      num_retries: 2,
      allowed_fails: 3,
      cooldown_time: 5,
      enable_pre_call_checks: false,
    });
    expect(config.general_settings).toMatchObject({
      redis_degraded_mode: 'fail_open',
      redis_command_timeout_ms: 1000,
      spend_ingestion_mode: 'legacy',
      embeddings_batch_enabled: false,
      budget_reservation_default_max_tokens: 4096,
    });
  });

  it.each([-1, 1.5, '"4096"', 10_000_001, 'null', '1e400', '"\\u0000"'])(
    'refuses budget_reservation_default_max_tokens: %s, naming it',
    (value) => {
      expect(issuesOf(`general_settings:\n  budget_reservation_default_max_tokens: ${value}\n`)).toEqual([
        'general_settings.budget_reservation_default_max_tokens: must be an integer from 0 to 10000000',
      ]);
    },
  );

  it('takes a budget_reservation_default_max_tokens from 0 to 10,000,000', () => {
    for (const value of [0, 10_000_000]) {
      const config = parseConfig(
        `general_settings:\n  budget_reservation_default_max_tokens: ${value}\n`,
        base,
      );
      expect(config.general_settings.budget_reservation_default_max_tokens).toBe(value);
    }
  });

  it('names the exact path of a value of the wrong kind', () => {
    const yaml = `
model_list:
  - model_name: a
    params: { provider: openai, model: gpt-4o, api_base: https://x.example/v1 }
  - model_name: b
    params: { provider: openai, model: gpt-4o, api_base: https://y.example/v1 }
  - model_name: c
    params: { provider: openai, model: gpt-4o, api_base: "not a url" }
`;
    expect(issuesOf(yaml)).toEqual(['model_list[2].params.api_base: must be a URL']);
  });

  it('reports an unknown key with the closest known key', () => {
    expect(issuesOf('router_settings:\n  num_retires: 3\n')).toEqual([
      "router_settings.num_retires: unknown key (did you mean 'num_retries'?)",
    ]);
  });

  it('reports every problem at once, including missing required keys', () => {
    const issues = issuesOf(`
model_list:
  - params: { model: gpt-4o }
general_settings:
  redis_degraded_mode: sometimes
`);
    expect(issues).toContain('model_list[0].model_name: is required');
    expect(issues).toContain(
      'general_settings.redis_degraded_mode: must be one of "fail_open", "fail_closed"',
    );
  });

  it('resolves os.environ/ references and names the path of a missing variable', () => {
    const yaml = `
model_list:
  - model_name: m
    params: { model: openai/gpt-4o, api_key: os.environ/OPENAI_KEY }
general_settings:
  master_key: os.environ/MASTER
`;
    const config = parseConfig(yaml, {
      ...base,
      env: { OPENAI_KEY: 'sk-upstream', MASTER: 'sk-master-123' },
    });
    expect(config.model_list[0]?.params.api_key).toBe('sk-upstream');
    expect(config.general_settings.master_key).toBe('sk-master-123');
    expect(issuesOf(yaml, { OPENAI_KEY: 'x' })).toEqual([
      'general_settings.master_key: environment variable MASTER is not set',
    ]);
  });

  it('loads a LiteLLM config unchanged', () => {
    const yaml = `
model_list:
  - model_name: gpt-4o
    litellm_params:
      model: azure/my-gpt4o
      api_base: https://example.openai.azure.com
      api_key: os.environ/AZURE_API_KEY
      api_version: "2024-06-01"
      rpm: 600
  - model_name: gpt-4o
    litellm_params:
      model: gpt-4o
litellm_settings:
  drop_params: true
router_settings:
  routing_strategy: least-busy
  redis_host: 127.0.0.1
  redis_port: 6380
  redis_password: s3cret
general_settings:
  master_key: sk-1234567890
  degraded_mode: fail_closed
  alerting: ["slack"]
environment_variables:
  AZURE_API_KEY: from-config-env
`;
    const config = parseConfig(yaml, { ...base });
    expect(config.model_list[0]?.params).toMatchObject({
      provider: 'azure',
      model: 'my-gpt4o',
      api_key: 'from-config-env',
      api_version: '2024-06-01',
    });
    expect(config.model_list[0]?.model_info.rpm_limit).toBe(600);
    expect(config.model_list[1]?.params.provider).toBe('openai');
    expect(config.general_settings.redis_url).toBe('redis://:s3cret@127.0.0.1:6380');
    expect(config.general_settings.redis_degraded_mode).toBe('fail_closed');
    expect(config.warnings).toEqual([
      'litellm_settings.drop_params is a LiteLLM setting Switchboard ignores: requests are passed through; the provider decides on unknown params',
      'general_settings.alerting is a LiteLLM setting Switchboard ignores: no alerting integration: alert on /metrics and /health/readiness',
    ]);
  });

  it('gives each deployment a stable id that hides its URL, and keeps explicit ids unique', () => {
    const yaml = `
model_list:
  - model_name: m
    params: { provider: openai, model: x, api_base: https://secret-host.example/v1 }
  - model_name: m
    params: { provider: openai, model: x, api_base: https://secret-host.example/v1 }
`;
    const first = parseConfig(yaml, { ...base });
    const second = parseConfig(yaml, { ...base });
    const ids = first.model_list.map((model) => model.model_info.id);
    expect(ids).toEqual(second.model_list.map((model) => model.model_info.id));
    expect(new Set(ids).size).toBe(2);
    expect(ids.join()).not.toContain('secret-host');
    expect(
      issuesOf(`
model_list:
  - { model_name: a, params: { model: x }, model_info: { id: same } }
  - { model_name: b, params: { model: y }, model_info: { id: same } }
`),
    ).toEqual(["model_list[1].model_info.id: 'same' is already used by model_list[0]"]);
  });

  it('rejects fallbacks that name a model group that does not exist', () => {
    expect(
      issuesOf(`
model_list:
  - { model_name: a, params: { model: x } }
router_settings:
  fallbacks: [{ a: [b] }]
`),
    ).toEqual(["router_settings.fallbacks[0].a[0]: no model_list entry has model_name 'b'"]);
  });

  it('reports YAML syntax errors and unreadable files', () => {
    expect(issuesOf('model_list: [\n')[0]).toMatch(/^YAML: /);
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-config-'));
    expect(() => loadConfig({ path: join(dir, 'missing.yaml'), env: {}, dataDir: dir })).toThrow(
      /file not found/,
    );
    writeFileSync(join(dir, 'ok.yaml'), 'model_list: []\n');
    expect(loadConfig({ path: join(dir, 'ok.yaml'), env: {}, dataDir: dir }).source).toBe(
      join(dir, 'ok.yaml'),
    );
  });

  it('returns a deep-frozen object', () => {
    const config = loadConfig({ path: undefined, env: {}, dataDir: '/d' });
    expect(Object.isFrozen(config.model_list[0]?.params)).toBe(true);
    expect(() => {
      (config.general_settings as { master_key?: string }).master_key = 'changed';
    }).toThrow(TypeError);
  });

  it('accepts the map form of mcp_servers and requires a token for bearer auth', () => {
    const config = parseConfig(
      'mcp_servers:\n  github:\n    url: https://mcp.example/mcp\n    transport: http\n',
      { ...base },
    );
    expect(config.mcp_servers[0]).toMatchObject({
      server_key: 'github',
      base_url: 'https://mcp.example/mcp',
      transport: 'streamable_http',
      auth_mode: 'none',
    });
    expect(
      issuesOf('mcp_servers:\n  - { server_key: s, base_url: "https://m.example", auth_mode: bearer }'),
    ).toEqual(['mcp_servers[0].auth_config.token: is required when auth_mode is bearer']);
  });
});
