/** Params of `elevenlabs` deployments: their validation and the endpoint they describe. */
import { extraHeaders } from '../openai/openai-settings.ts';

export const DEFAULT_API_BASE = 'https://api.elevenlabs.io';

export const elevenLabsParams = ['api_base', 'api_key', 'headers', 'extra_headers'] as const;

/** Where an ElevenLabs deployment's calls go and the headers every call carries. */
export interface ElevenLabsEndpoint {
  /** `https://host:port`. */
  origin: string;
  /** The path under which `/v1/...` is appended (empty for the public API). */
  prefix: string;
  headers: Readonly<Record<string, string>>;
}

const isHeaderMap = (value: unknown) =>
  value !== null &&
  typeof value === 'object' &&
  !Array.isArray(value) &&
  Object.values(value).every((header) => typeof header === 'string');

export function validateElevenLabsParams(params: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  if (typeof params.model !== 'string' || params.model.length === 0)
    problems.push('model: is required (the ElevenLabs model id, e.g. eleven_multilingual_v2 or scribe_v1)');
  if (params.api_key !== undefined && (typeof params.api_key !== 'string' || params.api_key.length === 0))
    problems.push('api_key: must be a non-empty string');
  if (params.api_key === undefined && params.api_base === undefined)
    problems.push('api_key: is required for the ElevenLabs API (sent as the xi-api-key header)');
  if (params.api_base !== undefined && !isHttpUrl(params.api_base))
    problems.push('api_base: must be an http(s) URL such as https://api.elevenlabs.io');
  for (const key of ['headers', 'extra_headers'] as const) {
    if (params[key] !== undefined && !isHeaderMap(params[key]))
      problems.push(`${key}: must be a map of header names to strings`);
  }
  return problems;
}

/**
 * `<api_base>/v1/...`: a trailing slash or `/v1` on api_base is dropped first, so both
 * `https://api.elevenlabs.io` and `https://api.elevenlabs.io/v1` work.
 */
export function elevenLabsEndpoint(params: Readonly<Record<string, unknown>>): ElevenLabsEndpoint {
  const base = new URL(String(params.api_base ?? DEFAULT_API_BASE));
  const prefix = base.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  const headers = extraHeaders(params);
  if (typeof params.api_key === 'string' && params.api_key) headers['xi-api-key'] = params.api_key;
  return { origin: base.origin, prefix, headers };
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
