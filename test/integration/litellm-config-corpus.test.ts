/**
 * LiteLLM-format configuration files (issue 10): each fixture under test/fixtures/litellm/ either
 * starts with exactly the warnings listed here or is refused with exactly these messages. Files are
 * written in LiteLLM's documented format; loading goes through the real loader and the model registry
 * (where provider params are checked), as the gateway does at start.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/config.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { builtinProviders } from '../../src/providers/builtin-providers.ts';
import { buildModelRegistry, deploymentProblems } from '../../src/routing/model-registry.ts';

const env = {
  OPENAI_API_KEY: 'sk-openai',
  AZURE_API_KEY: 'azure-key',
  LITELLM_MASTER_KEY: 'sk-master-key-long-enough',
  REDIS_PASSWORD: 'p@ss',
  PRIVATE_KEY: 'private',
};

type Outcome = { starts: string[]; check?: (config: Config) => void } | { refused: string[] };

const ignoredWarning = (key: string, reason: string) =>
  `${key} is a LiteLLM setting Switchboard ignores: ${reason}`;

const corpus: Record<string, Outcome> = {
  'proxy-basic.yaml': {
    starts: [
      ignoredWarning(
        'litellm_settings.drop_params',
        'requests are passed through; the provider decides on unknown params',
      ),
      ignoredWarning('litellm_settings.set_verbose', 'use --log-level'),
    ],
    check: (config) => expect(config.general_settings.master_key).toBe('sk-master-key-long-enough'),
  },
  'load-balancing.yaml': {
    starts: [],
    check: (config) => {
      expect(
        config.model_list.map((entry) => [entry.model_info.rpm_limit, entry.model_info.tpm_limit]),
      ).toEqual([
        [600, undefined],
        [undefined, 90000],
      ]);
      expect(config.general_settings.redis_url).toBe('redis://:p%40ss@127.0.0.1:6379');
    },
  },
  'reliability.yaml': {
    starts: ['litellm_settings.num_retries is also set as router_settings.num_retries; router_settings wins'],
    check: (config) =>
      expect(config.router_settings).toMatchObject({
        num_retries: 1,
        timeout: 45,
        allowed_fails: 2,
        cooldown_time: 20,
        fallbacks: { primary: ['backup'] },
        context_window_fallbacks: { primary: ['long-context'] },
      }),
  },
  'credentials.yaml': {
    starts: [],
    check: (config) =>
      expect(config.model_list[0]!.params).toMatchObject({
        provider: 'azure',
        api_key: 'azure-key',
        api_base: 'https://eu-resource.openai.azure.com/',
        api_version: '2024-10-21',
      }),
  },
  'credential-missing.yaml': {
    refused: [
      "model_list[0].litellm_params.litellm_credential_name: no credential_list entry is named 'azure-us'",
      'model_list[0].litellm_params.api_base: is required for azure (https://<resource>.openai.azure.com)',
    ],
  },
  'ignored-settings.yaml': {
    starts: [
      ignoredWarning('finetune_settings', 'no fine-tuning API'),
      ignoredWarning('files_settings', 'no files API yet'),
      // cache: true turns the response cache on; cache_params.type has no counterpart.
      'litellm_settings.cache_params.type is a LiteLLM setting Switchboard ignores: the response cache uses general_settings.redis_url when set, else an in-process cache',
      ignoredWarning(
        'litellm_settings.success_callback',
        'no logging callbacks: use the JSON logs and /metrics',
      ),
      ignoredWarning(
        'general_settings.alerting',
        'no alerting integration: alert on /metrics and /health/readiness',
      ),
      ignoredWarning(
        'general_settings.use_redis_transaction_buffer',
        'counters are written to Redis atomically per request',
      ),
      ignoredWarning(
        'general_settings.store_model_in_db',
        'identities always live in the database; models come from this file',
      ),
      ignoredWarning(
        'general_settings.pass_through_endpoints',
        'no pass-through endpoints: only the documented API is served',
      ),
      ignoredWarning(
        'router_settings.cache_responses',
        'the response cache is configured in general_settings.response_cache (docs/cache.md)',
      ),
    ],
  },
  'unknown-keys.yaml': {
    refused: [
      "litellm_settings.fallback: unknown key (did you mean 'fallbacks'?)",
      "router_settings.num_retires: unknown key (did you mean 'num_retries'?)",
      "general_settings.mastr_key: unknown key (did you mean 'master_key'?)",
    ],
  },
  'typo-api-base.yaml': {
    refused: [
      "model_list[0].litellm_params.api_bsae: unknown param (did you mean 'api_base'?); a misspelled address or credential is refused",
    ],
  },
  'yaml-1-1.yaml': {
    starts: [],
    check: (config) => {
      expect(config.model_list[0]!.model_info.tpm_limit).toBe(20000);
      expect(config.router_settings.enable_pre_call_checks).toBe(true);
    },
  },
  'mcp-map-form.yaml': { refused: ['mcp_servers.github.url: must be a URL'] },
  'include.yaml': {
    refused: ['include: is not supported; put the included model_list entries in this file'],
  },
  'wrong-type-tpm.yaml': { refused: ['model_list[0].litellm_params.tpm: must be an integer ≥ 0'] },
  'mcp-litellm-fields.yaml': {
    starts: [
      'mcp_servers.wiki.description is not used: tools carry their own descriptions',
      'mcp_servers.wiki.spec_version is not used: the MCP protocol version is negotiated at initialize',
      "mcp_servers.legacy.url ends in /sse: the legacy SSE transport is not supported; point it at the server's Streamable HTTP endpoint (often /mcp)",
    ],
    check: (config) =>
      expect(config.mcp_servers.find((server) => server.server_key === 'wiki')?.auth_mode).toBe('bearer'),
  },
  'fake-and-empty.yaml': {
    starts: [],
    check: (config) =>
      expect(config.model_list[0]!.params).toMatchObject({ provider: 'fake', model: 'demo-model' }),
  },
  'schema-and-provider-errors.yaml': {
    refused: [
      'router_settings.num_retries: must be an integer ≥ 0',
      "model_list[0].litellm_params.provider: 'faek' is not a supported provider (did you mean 'fake'?); supported: anthropic, azure, bedrock, cohere, deepseek, elevenlabs, fake, fireworks_ai, gemini, groq, hosted_vllm, llamacpp, lm_studio, mistral, ollama, ollama_chat, openai, openai_compatible, openrouter, perplexity, together_ai, vllm, xai",
      'model_list[1].litellm_params.api_base: is required for azure (https://<resource>.openai.azure.com)',
    ],
  },
  'example-master-key.yaml': {
    starts: [],
    check: (config) => expect(config.general_settings.master_key).toBe('sk-1234'),
  },
};

/** Loads as the gateway does at start: the file, then the registry; returns warnings or problems. */
function load(name: string): { config?: Config; warnings: string[]; issues: string[] } {
  const text = readFileSync(new URL(`../fixtures/litellm/${name}`, import.meta.url), 'utf8');
  try {
    const providers = builtinProviders();
    const config = parseConfig(text, {
      checkDeployment: (params, index) => deploymentProblems(params, index, providers),
      path: undefined,
      env,
      dataDir: '/tmp/switchboard-corpus',
      source: name,
    });
    const warnings = [...config.warnings];
    buildModelRegistry(config, builtinProviders(), Date.now(), warnings);
    return { config, warnings, issues: [] };
  } catch (error) {
    if (error instanceof ConfigError) return { warnings: [], issues: [...error.issues] };
    throw error;
  }
}

describe('LiteLLM configuration files', () => {
  it.each(Object.entries(corpus))('%s', (name, outcome) => {
    const result = load(name);
    if ('refused' in outcome) {
      expect(result.issues).toEqual(outcome.refused);
      return;
    }
    expect(result.issues).toEqual([]);
    expect(result.warnings).toEqual(outcome.starts);
    outcome.check?.(result.config!);
  });

  it('covers every fixture in the folder', async () => {
    const { readdirSync } = await import('node:fs');
    const files = readdirSync(new URL('../fixtures/litellm/', import.meta.url)).filter((file) =>
      file.endsWith('.yaml'),
    );
    expect(files.sort()).toEqual(Object.keys(corpus).sort());
  });
});
