/** Params of OpenAI-compatible deployments, and the endpoint they describe. */
import { RERANK_PARAMS, rerankParamProblems } from './openai-rerank.ts';
import type { OpenAiEndpoint } from './openai-transport.ts';
import { REQUEST_DEFAULT_PARAMS } from './request-defaults.ts';

/** `headers` and LiteLLM's `extra_headers`, sent with every request of the deployment. */
export function extraHeaders(params: Readonly<Record<string, unknown>>): Record<string, string> {
  return {
    ...(params.headers as Record<string, string> | undefined),
    ...(params.extra_headers as Record<string, string> | undefined),
  };
}

/** What an OpenAI-compatible deployment reads from its params (request defaults included). */
export const openAiParams = [
  'api_base',
  'api_key',
  'organization',
  'headers',
  'extra_headers',
  ...RERANK_PARAMS,
  ...REQUEST_DEFAULT_PARAMS,
] as const;

export function validateOpenAiParams(
  params: Readonly<Record<string, unknown>>,
  requireApiBase: boolean,
): string[] {
  const problems: string[] = rerankParamProblems(params);
  if (requireApiBase && params.api_base === undefined)
    problems.push('api_base: is required for this provider (the server URL, e.g. http://127.0.0.1:8000/v1)');
  for (const key of ['api_key', 'organization'] as const) {
    if (params[key] !== undefined && typeof params[key] !== 'string')
      problems.push(`${key}: must be a string`);
  }
  for (const key of ['headers', 'extra_headers'] as const) {
    const headers = params[key];
    if (
      headers !== undefined &&
      (headers === null ||
        typeof headers !== 'object' ||
        Object.values(headers).some((value) => typeof value !== 'string'))
    ) {
      problems.push(`${key}: must be a map of header names to strings`);
    }
  }
  return problems;
}

/**
 * The endpoint of an OpenAI-style server: `<api_base>/<operation>` (`chat/completions`, `embeddings` …),
 * bearer key, extra headers.
 * `pathOfBareServer` is added when `api_base` has no path of its own (`http://localhost:11434`).
 */
export function openAiEndpoint(
  params: Readonly<Record<string, unknown>>,
  defaultApiBase: string,
  pathOfBareServer?: string,
): OpenAiEndpoint {
  const base = new URL(String(params.api_base ?? defaultApiBase));
  if (pathOfBareServer && (base.pathname === '/' || base.pathname === '')) base.pathname = pathOfBareServer;
  const headers = extraHeaders(params);
  if (typeof params.api_key === 'string' && params.api_key)
    headers.authorization = `Bearer ${params.api_key}`;
  if (typeof params.organization === 'string') headers['openai-organization'] = params.organization;
  const root = base.pathname.replace(/\/+$/, '');
  const pathOf = (operation: string) => `${root}/${operation}${base.search}`;
  return { origin: base.origin, path: pathOf('chat/completions'), pathOf, headers };
}
