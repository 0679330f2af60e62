/**
 * The JSON-RPC errors of /mcp (the spec's table) and the catalogue that builds them, so codes and
 * messages never drift. Only mcp/ renders them; -32602 is reserved for client faults and anything
 * unexpected answers -32603. Messages never carry upstream text, URLs or secrets.
 */
export const JsonRpcCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  upstreamAuth: -32001,
  denied: -32003,
  toolNotFound: -32004,
  upstreamFailure: -32005,
  approvalRequired: -32008,
  approvalDenied: -32009,
  rateLimited: -32029,
  timedOut: -32030,
} as const;

export type JsonRpcErrorCode = (typeof JsonRpcCode)[keyof typeof JsonRpcCode];

export class JsonRpcError extends Error {
  readonly code: JsonRpcErrorCode;
  readonly data: Readonly<Record<string, unknown>> | undefined;

  constructor(code: JsonRpcErrorCode, message: string, data?: Readonly<Record<string, unknown>>) {
    super(message);
    this.name = 'JsonRpcError';
    this.code = code;
    this.data = data;
  }

  toJson(): { code: number; message: string; data?: Readonly<Record<string, unknown>> } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export const rpcErrors = {
  parse(): JsonRpcError {
    return new JsonRpcError(JsonRpcCode.parseError, 'Parse error: the body is not valid JSON.');
  },
  invalidRequest(detail: string): JsonRpcError {
    return new JsonRpcError(JsonRpcCode.invalidRequest, `Invalid request: ${detail}`);
  },
  methodNotFound(method: string): JsonRpcError {
    return new JsonRpcError(
      JsonRpcCode.methodNotFound,
      `Method not supported: '${method.slice(0, 100)}'. This gateway serves initialize, ping, tools/list and tools/call.`,
    );
  },
  invalidParams(detail: string): JsonRpcError {
    return new JsonRpcError(JsonRpcCode.invalidParams, `Invalid params: ${detail}`);
  },
  internal(): JsonRpcError {
    return new JsonRpcError(
      JsonRpcCode.internalError,
      'Internal error: the gateway failed unexpectedly. Retry; if it persists, report the x-request-id.',
    );
  },
  upstreamAuth(serverKey: string): JsonRpcError {
    return new JsonRpcError(
      JsonRpcCode.upstreamAuth,
      `The MCP server '${serverKey}' rejected the gateway's credentials. Ask an administrator to check its auth_config.`,
      { server: serverKey },
    );
  },
  denied(detail: string): JsonRpcError {
    return new JsonRpcError(JsonRpcCode.denied, `Access denied: ${detail}`);
  },
  toolNotFound(name: string): JsonRpcError {
    return new JsonRpcError(
      JsonRpcCode.toolNotFound,
      `Tool '${name.slice(0, 200)}' does not exist or is not visible to this API key. tools/list shows the tools it may call.`,
    );
  },
  batchTooLarge(maxBytes: number): JsonRpcError {
    return new JsonRpcError(
      JsonRpcCode.upstreamFailure,
      `The answers of this batch exceeded ${maxBytes} bytes together; send this call on its own or in a smaller batch.`,
    );
  },
  upstream(serverKey: string, detail: string, data: Readonly<Record<string, unknown>> = {}): JsonRpcError {
    return new JsonRpcError(JsonRpcCode.upstreamFailure, `The MCP server '${serverKey}' failed: ${detail}`, {
      server: serverKey,
      ...data,
    });
  },
  approvalRequired(approvalRequestId: string): JsonRpcError {
    return new JsonRpcError(
      JsonRpcCode.approvalRequired,
      'This tool call needs an approval. Ask an administrator to approve the request, then repeat the identical call within 15 minutes of the decision.',
      { approval_request_id: approvalRequestId },
    );
  },
  approvalDenied(approvalRequestId: string): JsonRpcError {
    return new JsonRpcError(
      JsonRpcCode.approvalDenied,
      'An administrator rejected this tool call. Identical calls are refused for 15 minutes after the decision.',
      { approval_request_id: approvalRequestId },
    );
  },
  rateLimited(name: string, detail: string, retryAfterSeconds?: number): JsonRpcError {
    return new JsonRpcError(
      JsonRpcCode.rateLimited,
      `Tool '${name}' is rate limited: ${detail}`,
      retryAfterSeconds === undefined ? undefined : { retry_after_seconds: retryAfterSeconds },
    );
  },
  timedOut(name: string, milliseconds: number): JsonRpcError {
    return new JsonRpcError(
      JsonRpcCode.timedOut,
      `Tool '${name}' did not finish within ${milliseconds} ms; the upstream call was aborted.`,
      { timeout_ms: milliseconds },
    );
  },
} as const;
