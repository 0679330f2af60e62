/**
 * Classifies Bedrock failures: an error status (code from the `x-amzn-errortype` header or a bounded
 * prefix of the body, never the body itself) and the exception frames of a ConverseStream.
 */
import type { ResponseHeaders, UpstreamResponse } from '../send-upstream.ts';
import { classifyStatus, UpstreamError } from '../upstream-error.ts';

const ERROR_BODY_PREFIX_BYTES = 4096;
const IDENTIFIER = /^[A-Za-z0-9_.-]{1,64}$/;

/** Stream exceptions worth another attempt (Bedrock's own advice for each). */
const RETRYABLE_EXCEPTIONS = new Set([
  'throttlingexception',
  'serviceunavailableexception',
  'internalserverexception',
  'modelstreamerrorexception',
  'modeltimeoutexception',
  'modelnotreadyexception',
]);

export async function classifyBedrockError(response: UpstreamResponse): Promise<UpstreamError> {
  let providerCode = errorTypeOf(response.headers);
  if (providerCode === undefined && !isEncoded(response.headers))
    providerCode = bodyCodeOf(await response.prefix(ERROR_BODY_PREFIX_BYTES));
  response.cancel();
  return classifyStatus(response.status, response.headers, providerCode);
}

/** `ValidationException` of `x-amzn-errortype: ValidationException:http://internal.amazon.com/…`. */
export function errorTypeOf(headers: ResponseHeaders): string | undefined {
  const value = headers['x-amzn-errortype'];
  const first = Array.isArray(value) ? value[0] : value;
  return identifier(first?.split(':')[0]);
}

/** `__type` (namespace dropped) or `code` of a JSON error body, if it is a short identifier. */
export function bodyCodeOf(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { __type?: unknown; code?: unknown };
    const candidate = typeof parsed.__type === 'string' ? parsed.__type.split('#').at(-1) : parsed.code;
    return identifier(candidate);
  } catch {
    return undefined;
  }
}

/** An `exception` (or `error`) frame of a ConverseStream as an UpstreamError; its message is dropped. */
export function streamException(type: string | undefined): UpstreamError {
  const providerCode = identifier(type);
  return new UpstreamError({
    kind: 'protocol',
    retryable: providerCode !== undefined && RETRYABLE_EXCEPTIONS.has(providerCode.toLowerCase()),
    message: `the upstream reported ${providerCode ?? 'an error'} in the stream`,
    ...(providerCode ? { providerCode } : {}),
  });
}

function identifier(value: unknown): string | undefined {
  return typeof value === 'string' && IDENTIFIER.test(value) ? value : undefined;
}

function isEncoded(headers: ResponseHeaders): boolean {
  const encoding = headers['content-encoding'];
  return encoding !== undefined && encoding !== 'identity';
}
