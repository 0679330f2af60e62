/**
 * A classified failure of an upstream MCP server (internal: never shown to callers as is). The
 * executor maps it to a JSON-RPC error; the upstream's own error text is never kept.
 */
export type UpstreamFailureKind =
  /** 401 or 403 from the upstream. */
  | 'auth'
  /** Connection refused, reset, DNS, TLS. */
  | 'network'
  /** request_timeout_ms passed. */
  | 'timeout'
  /** Any other non-2xx status. */
  | 'http_status'
  /** Not JSON, not JSON-RPC, no matching response, or a result of the wrong shape. */
  | 'malformed'
  /** The answer exceeded the size limit. */
  | 'oversize'
  /** The upstream answered with a JSON-RPC error object. */
  | 'rpc_error';

export class UpstreamMcpError extends Error {
  readonly kind: UpstreamFailureKind;
  readonly status: number | undefined;
  readonly rpcCode: number | undefined;

  constructor(kind: UpstreamFailureKind, message: string, extra: { status?: number; rpcCode?: number } = {}) {
    super(message);
    this.name = 'UpstreamMcpError';
    this.kind = kind;
    this.status = extra.status;
    this.rpcCode = extra.rpcCode;
  }
}
