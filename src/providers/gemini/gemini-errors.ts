/**
 * Gemini error answers: `{"error": {code, message, status, details}}` classified from the status, the
 * short `error.status` code (RESOURCE_EXHAUSTED …) and, on a 429, the `retryDelay` of a
 * google.rpc.RetryInfo detail, all read from a bounded prefix of the body that is then dropped. Also the
 * non-retryable refusals of requests this adapter cannot translate, and of prompts the provider blocked.
 */
import type { ResponseHeaders, UpstreamResponse } from '../send-upstream.ts';
import { classifyStatus, UpstreamError } from '../upstream-error.ts';

const ERROR_BODY_PREFIX_BYTES = 4096;
const MAX_RETRY_DELAY_MS = 3_600_000;

export async function classifyGeminiErrorResponse(response: UpstreamResponse): Promise<UpstreamError> {
  const prefix = isEncoded(response.headers) ? '' : await response.prefix(ERROR_BODY_PREFIX_BYTES);
  response.cancel();
  const { providerCode, retryDelayMs } = readGeminiError(prefix);
  const error = classifyStatus(response.status, response.headers, providerCode);
  if (response.status !== 429 || error.retryAfterMs !== undefined || retryDelayMs === undefined) return error;
  return new UpstreamError({
    kind: error.kind,
    message: error.message,
    retryable: error.retryable,
    retryAfterMs: retryDelayMs,
    ...(error.status !== undefined ? { status: error.status } : {}),
    ...(error.providerCode !== undefined ? { providerCode: error.providerCode } : {}),
  });
}

/**
 * `error.status` (when a short identifier) and the RetryInfo delay of a Gemini error body. A body cut
 * by the prefix bound is not JSON; the two fields are then looked for in its text.
 */
export function readGeminiError(text: string): { providerCode?: string; retryDelayMs?: number } {
  let status: unknown;
  let delay: unknown;
  try {
    const parsed = JSON.parse(text) as { error?: { status?: unknown; details?: unknown } };
    status = parsed.error?.status;
    const details = Array.isArray(parsed.error?.details) ? parsed.error.details : [];
    delay = details.find(
      (detail: { '@type'?: unknown; retryDelay?: unknown } | null) =>
        typeof detail?.['@type'] === 'string' && detail['@type'].endsWith('google.rpc.RetryInfo'),
    )?.retryDelay;
  } catch {
    status = /"status"\s*:\s*"([A-Z_]{1,64})"/.exec(text)?.[1];
    delay = /"retryDelay"\s*:\s*"([0-9.]{1,12}s)"/.exec(text)?.[1];
  }
  const providerCode = shortCode(status);
  const retryDelayMs = parseDuration(delay);
  return {
    ...(providerCode !== undefined ? { providerCode } : {}),
    ...(retryDelayMs !== undefined ? { retryDelayMs } : {}),
  };
}

/** A google.protobuf.Duration in JSON ("7s", "1.5s") in milliseconds, capped at an hour. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{1,9}(?:\.\d{1,9})?)s$/.exec(value);
  if (!match) return undefined;
  return Math.min(Math.round(Number(match[1]) * 1000), MAX_RETRY_DELAY_MS);
}

export function shortCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : undefined;
}

/** A request this adapter cannot express in the Gemini API: the caller's fault, never retried elsewhere. */
export function refusedRequest(providerCode: string, message: string): UpstreamError {
  return new UpstreamError({ kind: 'status', status: 400, retryable: false, message, providerCode });
}

/** The provider blocked the prompt itself (promptFeedback.blockReason): the same prompt fails everywhere. */
export function promptBlocked(reason: unknown): UpstreamError {
  return new UpstreamError({
    kind: 'status',
    status: 400,
    retryable: false,
    message: 'the provider blocked the prompt',
    providerCode: `prompt_blocked_${shortCode(reason) ?? 'UNSPECIFIED'}`,
  });
}

function isEncoded(headers: ResponseHeaders): boolean {
  const encoding = headers['content-encoding'];
  return encoding !== undefined && encoding !== 'identity';
}
