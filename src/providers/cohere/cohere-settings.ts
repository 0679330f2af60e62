/** Params of a `cohere` deployment (Cohere's v2 API: embed and rerank), their checks and the endpoint they describe. */
import { cohereEmbedParamProblems } from '../cohere-embed-fields.ts';
import { extraHeaders } from '../openai/openai-settings.ts';

export const DEFAULT_COHERE_API_BASE = 'https://api.cohere.com';

export const cohereParams = [
  'api_base',
  'api_key',
  'headers',
  'extra_headers',
  'input_type',
  'truncate',
] as const;

/** Where and how to reach one Cohere deployment. */
export interface CohereEndpoint {
  origin: string;
  embedPath: string;
  rerankPath: string;
  headers: Readonly<Record<string, string>>;
}

type Check = readonly [key: string, check: (value: unknown) => boolean, expected: string];

const isHeaderMap = (value: unknown) =>
  value !== null &&
  typeof value === 'object' &&
  !Array.isArray(value) &&
  Object.values(value).every((item) => typeof item === 'string');

const checks: readonly Check[] = [
  ['api_key', (value) => typeof value === 'string' && value !== '', 'a non-empty string'],
  ['headers', isHeaderMap, 'a map of header names to strings'],
  ['extra_headers', isHeaderMap, 'a map of header names to strings'],
];

export function validateCohereParams(params: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  if (typeof params.model !== 'string' || params.model === '')
    problems.push('model: is required for cohere (the Cohere model, e.g. embed-v4.0 or rerank-v3.5)');
  if (params.api_base !== undefined) {
    const base = httpUrl(params.api_base);
    if (!base) problems.push(`api_base: must be an http(s) URL (default ${DEFAULT_COHERE_API_BASE})`);
    else if (/\/v1(\/|$)/.test(base.pathname))
      problems.push("api_base: points at Cohere's v1 API; Switchboard speaks v2 (write the server URL)");
  }
  if (params.api_base === undefined && params.api_key === undefined)
    problems.push('api_key: is required for the Cohere API (a key from the Cohere dashboard)');
  for (const [key, check, expected] of checks) {
    if (params[key] !== undefined && !check(params[key])) problems.push(`${key}: must be ${expected}`);
  }
  problems.push(...cohereEmbedParamProblems(params));
  return problems;
}

/**
 * `<api_base>/v2/embed` and `<api_base>/v2/rerank`, bearer key. LiteLLM users write api_base as the
 * server (`https://api.cohere.com`), the version (`…/v2`) or a whole operation URL
 * (`…/v2/embed`, `…/v2/rerank`): each is read as the server the two operations live under.
 */
export function cohereEndpoint(params: Readonly<Record<string, unknown>>): CohereEndpoint {
  const base = new URL(String(params.api_base ?? DEFAULT_COHERE_API_BASE));
  const root = base.pathname.replace(/\/+$/, '').replace(/\/v2(\/(embed|rerank))?$/, '');
  const headers = extraHeaders(params);
  if (typeof params.api_key === 'string' && params.api_key)
    headers.authorization = `Bearer ${params.api_key}`;
  return {
    origin: base.origin,
    embedPath: `${root}/v2/embed${base.search}`,
    rerankPath: `${root}/v2/rerank${base.search}`,
    headers,
  };
}

function httpUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}
