/**
 * Classifies an OpenAI-wire error answer from its status, Retry-After headers and a bounded prefix of
 * its body. Only a short, sanitized provider code (like `context_length_exceeded`) is kept; the body
 * itself is never relayed. Encoded (gzip, br) bodies are not decompressed.
 */
import type { ResponseHeaders, UpstreamResponse } from '../send-upstream.ts';
import { classifyStatus, type UpstreamError } from '../upstream-error.ts';

const ERROR_BODY_PREFIX_BYTES = 4096;

export async function classifyErrorResponse(response: UpstreamResponse): Promise<UpstreamError> {
  const providerCode = isEncoded(response.headers)
    ? undefined
    : providerCodeOf(await response.prefix(ERROR_BODY_PREFIX_BYTES));
  response.cancel();
  return classifyStatus(response.status, response.headers, providerCode);
}

/** `error.code` (or `error.type`) of an OpenAI error body, if it is a short identifier. */
export function providerCodeOf(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; type?: unknown } };
    const candidate = parsed.error?.code ?? parsed.error?.type;
    return typeof candidate === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(candidate) ? candidate : undefined;
  } catch {
    return undefined;
  }
}

function isEncoded(headers: ResponseHeaders): boolean {
  const encoding = headers['content-encoding'];
  return encoding !== undefined && encoding !== 'identity';
}
