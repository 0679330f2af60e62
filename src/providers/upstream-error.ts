/**
 * A classified provider failure. Classification happens once, in the adapter, from trusted metadata
 * (status, Retry-After, undici error codes) and never keeps the provider's body: routing decides on
 * `retryable`, then maps the error to a sanitized GatewayError for the caller.
 */
export type UpstreamErrorKind =
  /** TCP/TLS connection failed or timed out. */
  | 'connect'
  /** No response headers, first chunk or body within the deadline. */
  | 'timeout'
  /** No pooled connection became free in time; nothing was sent (known zero output). */
  | 'pool_timeout'
  /** The upstream answered with an error status. */
  | 'status'
  /** The upstream answered something that is not the wire format (bad JSON, broken stream). */
  | 'protocol'
  /** The connection broke after the request was sent. */
  | 'network'
  /**
   * The answer is larger than the gateway reads (MAX_RESPONSE_BYTES): the request asked for too much
   * (2048 embeddings as floats), so neither a retry nor the deployment's health is concerned.
   */
  | 'too_large'
  /** The caller went away or the request deadline passed. */
  | 'aborted';

export interface UpstreamErrorInit {
  kind: UpstreamErrorKind;
  message: string;
  status?: number;
  retryable: boolean;
  retryAfterMs?: number;
  /** A short, sanitized reason from the provider (for example an error code), never the raw body. */
  providerCode?: string;
}

export class UpstreamError extends Error {
  readonly kind: UpstreamErrorKind;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly providerCode: string | undefined;

  constructor(init: UpstreamErrorInit) {
    super(init.message);
    this.name = 'UpstreamError';
    this.kind = init.kind;
    this.status = init.status;
    this.retryable = init.retryable;
    this.retryAfterMs = init.retryAfterMs;
    this.providerCode = init.providerCode;
  }
}

/**
 * A failure of the gateway's own code during an attempt (a serializer that threw, a bug): never the
 * upstream's fault, so it is not retried, does not count against the deployment and answers 500.
 */
export class LocalFailure extends Error {
  constructor(cause: unknown) {
    super('the gateway failed while making the upstream call', { cause });
    this.name = 'LocalFailure';
  }
}

const retryableStatuses = new Set([408, 409, 425, 429]);

/** Classifies an upstream error status: 408, 409, 425, 429 and 5xx are retryable, other 4xx are not. */
export function classifyStatus(
  status: number,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  providerCode?: string,
): UpstreamError {
  const retryAfterMs = parseRetryAfter(headers, Date.now());
  return new UpstreamError({
    kind: 'status',
    status,
    retryable: status >= 500 || retryableStatuses.has(status),
    message: `upstream answered ${status}`,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(providerCode !== undefined ? { providerCode } : {}),
  });
}

/** Reads `retry-after-ms` or `retry-after` (seconds or an HTTP date) into milliseconds, capped at an hour. */
export function parseRetryAfter(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  now: number,
): number | undefined {
  const milliseconds = first(headers['retry-after-ms']);
  if (milliseconds !== undefined && /^\d+(\.\d+)?$/.test(milliseconds)) return cap(Number(milliseconds));
  const value = first(headers['retry-after']);
  if (value === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return cap(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : cap(Math.max(0, date - now));
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function cap(milliseconds: number): number {
  return Math.min(Math.max(0, Math.round(milliseconds)), 3_600_000);
}

/**
 * Errors of sockets, DNS (`ECONNRESET`, `EAI_AGAIN` …), undici and our own transport (`SB_…`); Node's
 * `ERR_…` codes (`ERR_INVALID_ARG_TYPE`) come from our code. Anything else is a local failure.
 */
function isTransportError(code: string | undefined, name: string | undefined): boolean {
  if (name === 'AbortError' || name === 'TimeoutError') return true;
  return (
    code !== undefined &&
    /^(UND_ERR_|SB_|E(?!RR_)[A-Z0-9_]+$|ERR_STREAM_PREMATURE_CLOSE$|ABORT_ERR$)/.test(code)
  );
}

/**
 * Classifies an error thrown while sending to or reading from an upstream: undici and socket codes
 * become an UpstreamError (the request never reached the upstream, or got no answer in time); any other
 * error is the gateway's own and becomes a LocalFailure.
 */
export function classifyTransportError(error: unknown): UpstreamError | LocalFailure {
  if (error instanceof UpstreamError || error instanceof LocalFailure) return error;
  const code = (error as { code?: string } | undefined)?.code;
  const name = (error as { name?: string } | undefined)?.name;
  if (!isTransportError(code, name)) return new LocalFailure(error);
  if (name === 'AbortError' || code === 'UND_ERR_ABORTED' || code === 'ABORT_ERR') {
    return new UpstreamError({ kind: 'aborted', retryable: false, message: 'request aborted' });
  }
  switch (code) {
    case 'SB_POOL_TIMEOUT':
      return new UpstreamError({
        kind: 'pool_timeout',
        retryable: true,
        message: 'no upstream connection became free in time',
      });
    case 'SB_FIRST_CHUNK_TIMEOUT':
      return new UpstreamError({
        kind: 'timeout',
        retryable: true,
        message: 'the upstream sent no chunk in time (keep-alive comments do not count)',
      });
    case 'SB_STREAM_IDLE_TIMEOUT':
      return new UpstreamError({
        kind: 'timeout',
        retryable: true,
        message:
          'the upstream stream sent no chunk in time (keep-alive comments and unended lines do not count)',
      });
    case 'SB_SSE_LIMIT':
      return new UpstreamError({
        kind: 'protocol',
        retryable: true,
        message: 'the upstream stream exceeded a line or event bound',
      });
    case 'SB_RESPONSE_TOO_LARGE':
      return new UpstreamError({
        kind: 'too_large',
        retryable: false,
        message: (error as Error).message,
      });
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new UpstreamError({
        kind: 'connect',
        retryable: true,
        message: 'connecting to the upstream timed out',
      });
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new UpstreamError({
        kind: 'timeout',
        retryable: true,
        message: 'the upstream sent no response headers in time',
      });
    case 'UND_ERR_BODY_TIMEOUT':
      return new UpstreamError({
        kind: 'timeout',
        retryable: true,
        message: 'the upstream stopped sending in time',
      });
    case 'EUPSTREAMFORBIDDEN':
      return new UpstreamError({
        kind: 'connect',
        retryable: false,
        message: 'the upstream host resolves to a forbidden (link-local or metadata) address',
      });
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'UND_ERR_CONNECT':
      return new UpstreamError({
        kind: 'connect',
        retryable: true,
        message: 'could not connect to the upstream',
      });
    default:
      return new UpstreamError({
        kind: 'network',
        retryable: true,
        message: 'the upstream connection failed',
      });
  }
}
