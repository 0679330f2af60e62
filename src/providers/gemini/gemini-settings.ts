/** Params of a `gemini` deployment (Google AI Studio / Gemini API), their checks and the endpoint they describe. */
import { extraHeaders } from '../openai/openai-settings.ts';
import { TASK_TYPE_EXPECTED, taskTypeOf } from './gemini-embedding-settings.ts';

export const DEFAULT_GEMINI_API_BASE = 'https://generativelanguage.googleapis.com';

/** Request fields a deployment may give a default for (the caller's value wins). */
export const GEMINI_REQUEST_DEFAULT_PARAMS = [
  'temperature',
  'top_p',
  'top_k',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'seed',
] as const;

export const geminiParams = [
  'api_base',
  'api_key',
  'headers',
  'extra_headers',
  'task_type',
  ...GEMINI_REQUEST_DEFAULT_PARAMS,
] as const;

/** Where and how to reach one Gemini deployment. */
export interface GeminiEndpoint {
  origin: string;
  /** Path (and query) of `:generateContent`. */
  completePath: string;
  /** Path and query of `:streamGenerateContent?alt=sse`. */
  streamPath: string;
  headers: Readonly<Record<string, string>>;
}

type Check = (value: unknown) => boolean;

const isNumber: Check = (value) => typeof value === 'number' && Number.isFinite(value);
const isPositiveInteger: Check = (value) => Number.isInteger(value) && (value as number) >= 1;
const isStop: Check = (value) =>
  typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string'));
const isHeaderMap: Check = (value) =>
  value !== null &&
  typeof value === 'object' &&
  !Array.isArray(value) &&
  Object.values(value).every((item) => typeof item === 'string');

const checks: ReadonlyArray<readonly [key: string, check: Check, expected: string]> = [
  ['api_key', (value) => typeof value === 'string', 'a string'],
  ['headers', isHeaderMap, 'a map of header names to strings'],
  ['extra_headers', isHeaderMap, 'a map of header names to strings'],
  ['temperature', isNumber, 'a number'],
  ['top_p', isNumber, 'a number'],
  ['top_k', isPositiveInteger, 'an integer ≥ 1'],
  ['max_tokens', isPositiveInteger, 'an integer ≥ 1'],
  ['max_completion_tokens', isPositiveInteger, 'an integer ≥ 1'],
  ['stop', isStop, 'a string or a list of strings'],
  ['seed', Number.isInteger, 'an integer'],
  ['task_type', (value) => taskTypeOf(value) !== undefined, TASK_TYPE_EXPECTED],
];

export function validateGeminiParams(params: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  if (typeof params.model !== 'string' || modelName(params.model) === '')
    problems.push('model: is required for gemini (the Gemini model, e.g. gemini-2.5-flash)');
  if (params.api_base !== undefined && !isHttpUrl(params.api_base))
    problems.push('api_base: must be an http(s) URL (default https://generativelanguage.googleapis.com)');
  if (params.api_base === undefined && params.api_key === undefined)
    problems.push('api_key: is required for the Gemini API (a key from Google AI Studio)');
  for (const [key, check, expected] of checks) {
    if (params[key] !== undefined && !check(params[key])) problems.push(`${key}: must be ${expected}`);
  }
  return problems;
}

/** The model id without the `models/` prefix the Gemini API also accepts in names. */
export function modelName(model: string): string {
  return model.replace(/^models\//, '');
}

/**
 * `<api_base path>/v1beta/models/<model>:generateContent` (no version added when api_base ends with
 * `/v1beta` or `/v1`); the key goes in `x-goog-api-key`, never in the URL, so it stays out of access logs.
 */
export function geminiEndpoint(params: Readonly<Record<string, unknown>>, model: string): GeminiEndpoint {
  const base = new URL(String(params.api_base ?? DEFAULT_GEMINI_API_BASE));
  let path = base.pathname.replace(/\/+$/, '');
  if (!/\/v1(beta)?$/.test(path)) path += '/v1beta';
  const prefix = `${path}/models/${encodeURIComponent(modelName(model))}`;
  const query = base.search.slice(1);
  const headers = extraHeaders(params);
  if (typeof params.api_key === 'string' && params.api_key) headers['x-goog-api-key'] = params.api_key;
  return {
    origin: base.origin,
    completePath: `${prefix}:generateContent${query ? `?${query}` : ''}`,
    streamPath: `${prefix}:streamGenerateContent?alt=sse${query ? `&${query}` : ''}`,
    headers,
  };
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
