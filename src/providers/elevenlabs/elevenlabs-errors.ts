/**
 * ElevenLabs error answers, classified from their status, Retry-After and a bounded prefix of the body,
 * keeping only a short code: `detail.status` of `{"detail": {"status": "voice_not_found", "message": …}}`,
 * or the first `detail[].type` of a 422 validation answer. The body itself is never kept, and encoded
 * (gzip, br) bodies are not decompressed.
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
  const candidate = Array.isArray(detail)
    ? (detail[0] as { type?: unknown } | undefined)?.type
    : (detail as { status?: unknown; code?: unknown } | undefined)?.status;
  return typeof candidate === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(candidate) ? candidate : undefined;
}
