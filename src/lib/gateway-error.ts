/**
 * The one error family that reaches callers. `http/plugins/errors.ts` alone renders it as the OpenAI
 * envelope `{"error": {"message", "type", "param", "code"}}`; build instances through `errors` in
 * `error-catalogue.ts` so codes stay stable.
 */
export interface GatewayErrorInit {
  status: number;
  type: string;
  code: string;
  message: string;
  param?: string | null;
  /** Seconds; sent as `retry-after` on 429 and 503. */
  retryAfter?: number;
  /** Extra response headers (for example rate-limit headers on a 429). */
  headers?: Readonly<Record<string, string>>;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  readonly retryAfter: number | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(init: GatewayErrorInit) {
    super(init.message);
    this.name = 'GatewayError';
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.retryAfter = init.retryAfter;
    this.headers = init.headers;
  }

  toBody(): { error: { message: string; type: string; param: string | null; code: string } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}

/** The same error with more response headers (rate-limit and routing headers belong on errors too). */
export function withHeaders(error: unknown, headers: Readonly<Record<string, string>>): unknown {
  if (!(error instanceof GatewayError) || Object.keys(headers).length === 0) return error;
  return new GatewayError({
    status: error.status,
    type: error.type,
    code: error.code,
    message: error.message,
    param: error.param,
    ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
    headers: { ...headers, ...error.headers },
  });
}
