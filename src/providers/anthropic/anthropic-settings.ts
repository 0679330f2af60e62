/** Params of `anthropic` deployments: their validation, the endpoint they describe, and request defaults. */
import type { Endpoint } from '../openai/openai-compatible-adapter.ts';
import { extraHeaders } from '../openai/openai-settings.ts';

export const DEFAULT_API_BASE = 'https://api.anthropic.com';
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens; this is sent when neither the caller nor the deployment sets one. */
export const DEFAULT_MAX_TOKENS = 4096;

/** Request fields a deployment may give a default for (the caller's value wins). */
export const ANTHROPIC_REQUEST_DEFAULTS = ['temperature', 'top_p', 'top_k', 'max_tokens', 'stop'] as const;

export const anthropicParams = [
  'api_base',
  'api_key',
  'anthropic_version',
  'headers',
  'extra_headers',
  ...ANTHROPIC_REQUEST_DEFAULTS,
] as const;

type Check = [key: string, ok: (value: unknown) => boolean, expected: string];

const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value);
const isHeaderMap = (value: unknown) =>
  value !== null &&
  typeof value === 'object' &&
  !Array.isArray(value) &&
  Object.values(value).every((header) => typeof header === 'string');

const checks: readonly Check[] = [
  ['model', (value) => typeof value === 'string' && value.length > 0, 'the Anthropic model id (a string)'],
  ['api_key', (value) => typeof value === 'string', 'a string'],
  ['api_base', isHttpUrl, 'an http(s) URL such as https://api.anthropic.com'],
  ['anthropic_version', (value) => typeof value === 'string' && value.length > 0, 'a string'],
  ['headers', isHeaderMap, 'a map of header names to strings'],
  ['extra_headers', isHeaderMap, 'a map of header names to strings'],
  ['temperature', (value) => isNumber(value) && (value as number) >= 0, 'a number ≥ 0'],
  [
    'top_p',
    (value) => isNumber(value) && (value as number) >= 0 && (value as number) <= 1,
    'a number from 0 to 1',
  ],
  ['top_k', (value) => Number.isInteger(value) && (value as number) >= 0, 'an integer ≥ 0'],
  ['max_tokens', (value) => Number.isInteger(value) && (value as number) >= 1, 'an integer ≥ 1'],
  [
    'stop',
    (value) =>
      typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string')),
    'a string or a list of strings',
  ],
];

export function validateAnthropicParams(params: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  if (params.model === undefined) problems.push('model: is required (the Anthropic model id)');
  for (const [key, ok, expected] of checks) {
    if (params[key] !== undefined && !ok(params[key])) problems.push(`${key}: must be ${expected}`);
  }
  return problems;
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * `<api_base>/v1/messages`: a trailing slash or `/v1` on api_base is dropped first, so both
 * `https://api.anthropic.com` and `https://api.anthropic.com/v1` (as LiteLLM users write it) work.
 */
export function anthropicEndpoint(params: Readonly<Record<string, unknown>>): Endpoint {
  const base = new URL(String(params.api_base ?? DEFAULT_API_BASE));
  const prefix = base.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  const headers = extraHeaders(params);
  if (typeof params.api_key === 'string' && params.api_key) headers['x-api-key'] = params.api_key;
  headers['anthropic-version'] = String(params.anthropic_version ?? DEFAULT_ANTHROPIC_VERSION);
  return { origin: base.origin, path: `${prefix}/v1/messages${base.search}`, headers };
}

/** The request defaults present in `params`, frozen once per deployment. */
export function anthropicDefaults(
  params: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  const defaults: Record<string, unknown> = {};
  for (const name of ANTHROPIC_REQUEST_DEFAULTS)
    if (params[name] !== undefined) defaults[name] = params[name];
  return Object.freeze(defaults);
}
