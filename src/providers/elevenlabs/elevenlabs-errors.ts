/**
 * ElevenLabs error answers, classified from their status, Retry-After and a bounded prefix of the body,
 * keeping only a short code: `detail.code` of `{"detail": {"type", "code": "voice_not_found", "message",
 * "status", …}}`, else the legacy `detail.status` (older answers carry only that), or the first
 * `detail[].type` of a 422 validation answer. The body itself is never kept, and encoded (gzip, br)
 * bodies are not decompressed.
 */
import type { UpstreamResponse } from '../send-upstream.ts';
import { classifyStatus, type UpstreamError } from '../upstream-error.ts';

const ERROR_BODY_PREFIX_BYTES = 4096;

export async function classifyElevenLabsError(response: UpstreamResponse): Promise<UpstreamError> {
  const encoding = response.headers['content-encoding'];
  const encoded = encoding !== undefined && encoding !== 'identity';
  const providerCode = encoded ? undefined : errorCodeOf(await response.prefix(ERROR_BODY_PREFIX_BYTES));
  response.cancel();
  return classifyStatus(response.status, response.headers, providerCode);
}

/** The short code of an ElevenLabs error body, if it has one that is a plain identifier. */
export function errorCodeOf(text: string): string | undefined {
  let detail: unknown;
  try {
    detail = (JSON.parse(text) as { detail?: unknown } | null)?.detail;
  } catch {
    return undefined;
  }
  if (Array.isArray(detail)) return shortCode((detail[0] as { type?: unknown } | undefined)?.type);
  const { code, status } = (detail ?? {}) as { code?: unknown; status?: unknown };
  // `code` is current; `status` is the legacy field that older answers carry alone.
  return shortCode(code) ?? shortCode(status);
}

function shortCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : undefined;
}
