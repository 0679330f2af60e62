/**
 * Classifies Anthropic error answers (`{"type":"error","error":{"type":"rate_limit_error",…}}`) from
 * their status, Retry-After and a bounded prefix of the body, keeping only `error.type` when it is a
 * short identifier; the body itself is never kept, and encoded (gzip, br) bodies are not decompressed.
 */
import type { UpstreamResponse } from '../send-upstream.ts';
import { classifyStatus, UpstreamError } from '../upstream-error.ts';

const ERROR_BODY_PREFIX_BYTES = 4096;

export async function classifyErrorResponse(response: UpstreamResponse): Promise<UpstreamError> {
  const encoding = response.headers['content-encoding'];
  const encoded = encoding !== undefined && encoding !== 'identity';
  const providerCode = encoded ? undefined : errorTypeOf(await response.prefix(ERROR_BODY_PREFIX_BYTES));
  response.cancel();
  return classifyStatus(response.status, response.headers, providerCode);
}

/** `error.type` of an Anthropic error body, if it is a short identifier. */
export function errorTypeOf(text: string): string | undefined {
  try {
    return errorTypeIn(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function errorTypeIn(value: unknown): string | undefined {
  const candidate = (value as { error?: { type?: unknown } } | null)?.error?.type;
  return typeof candidate === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(candidate) ? candidate : undefined;
}

/** An in-stream `error` event (overloaded_error mid-stream, for example): retryable, like a broken stream. */
export function streamErrorEvent(parsed: unknown): UpstreamError {
  const providerCode = errorTypeIn(parsed);
  return new UpstreamError({
    kind: 'protocol',
    retryable: true,
    message: 'the upstream reported an error in the stream',
    ...(providerCode ? { providerCode } : {}),
  });
}
