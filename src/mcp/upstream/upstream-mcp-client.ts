/**
 * An MCP client for one upstream server over Streamable HTTP, on a pooled undici connection pool. It
 * performs the initialize handshake once per upstream session, reuses the `MCP-Session-Id` the upstream
 * hands out, and re-initializes once when the upstream answers 404 (or 400) to that session. Every request is
 * bounded by `request_timeout_ms` and by the caller's signal; failures are classified into
 * UpstreamMcpError, never carrying the upstream's text. Tool calls keep to their API key's share of
 * the pool (connection-share.ts).
 */

import { Pool } from 'undici';
import { guardedLookup } from '../../lib/upstream-url-policy.ts';
import { rpcErrors } from '../json-rpc-error.ts';
import { isSupportedProtocolVersion, LATEST_PROTOCOL_VERSION } from '../protocol-version.ts';
import { ConnectionShare, ConnectionShareExhausted, type ReleaseConnection } from './connection-share.ts';
import { readJsonRpcResponse } from './read-json-rpc-response.ts';
import { UpstreamMcpError } from './upstream-mcp-error.ts';

export interface UpstreamServerSettings {
  serverKey: string;
  baseUrl: string;
  /** Bearer token (auth_mode bearer), already opened. */
  token: string | undefined;
  requestTimeoutMs: number;
}

export interface UpstreamClientOptions {
  clientName: string;
  clientVersion: string;
  maxResponseBytes: number;
  connections: number;
  /** Tool calls one API key may have in flight to the server (connection-share.ts); unset: no bound. */
  connectionsPerKey?: number;
}

export interface UpstreamRequestOptions {
  signal?: AbortSignal | undefined;
  /** Caller headers already filtered by the server's forwarded_headers_allowlist. */
  headers?: Readonly<Record<string, string>> | undefined;
}

interface Session {
  id: string | undefined;
  protocolVersion: string;
}

const MAX_TOOL_PAGES = 50;
/** How long a call over its key's connection share waits in the key's queue before -32029. */
const SHARE_WAIT_MS = 5_000;
/** Ending a session is a courtesy: it never holds up a shutdown or a health check for long. */
const END_SESSION_TIMEOUT_MS = 2_000;

export class UpstreamMcpClient {
  readonly settings: UpstreamServerSettings;
  private readonly options: UpstreamClientOptions;
  private readonly pool: Pool;
  private readonly share: ConnectionShare | undefined;
  private readonly path: string;
  private session: Promise<Session> | undefined;
  private established: Session | undefined;
  private nextId = 1;
  /** Handshakes performed (diagnostics and tests of session reuse). */
  initializeCount = 0;

  constructor(settings: UpstreamServerSettings, options: UpstreamClientOptions) {
    this.settings = settings;
    this.options = options;
    const url = new URL(settings.baseUrl);
    this.path = `${url.pathname}${url.search}`;
    this.pool = new Pool(url.origin, {
      connections: options.connections,
      keepAliveTimeout: 30_000,
      headersTimeout: settings.requestTimeoutMs,
      bodyTimeout: settings.requestTimeoutMs,
      // Names resolving to link-local or metadata addresses are refused at connect time (issue 9).
      connect: { lookup: guardedLookup },
    });
    const perKey = options.connectionsPerKey;
    if (perKey !== undefined && perKey < options.connections)
      this.share = new ConnectionShare({
        perKey,
        waitMs: Math.min(SHARE_WAIT_MS, settings.requestTimeoutMs),
      });
  }

  /** Every tool the upstream lists (following pagination cursors). */
  async listTools(options: UpstreamRequestOptions = {}): Promise<unknown[]> {
    const tools: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await this.request('tools/list', cursor === undefined ? {} : { cursor }, options);
      if (
        result === null ||
        typeof result !== 'object' ||
        !Array.isArray((result as { tools?: unknown }).tools)
      ) {
        throw new UpstreamMcpError('malformed', 'tools/list did not return a tools array');
      }
      tools.push(...(result as { tools: unknown[] }).tools);
      const next = (result as { nextCursor?: unknown }).nextCursor;
      if (typeof next !== 'string' || next.length === 0) return tools;
      cursor = next;
    }
    return tools;
  }

  async callTool(
    name: string,
    args: Readonly<Record<string, unknown>>,
    options: UpstreamRequestOptions = {},
  ): Promise<unknown> {
    return this.request('tools/call', { name, arguments: args }, options);
  }

  /**
   * Takes one of `holder`'s (an API key's) share of the server's connections for a tool call, waiting
   * briefly when the key's calls already use it all; -32029 for `toolName` beyond the key's queue.
   */
  async reserveConnection(holder: string, toolName: string, signal: AbortSignal): Promise<ReleaseConnection> {
    try {
      return (await this.share?.acquire(holder, signal)) ?? (() => {});
    } catch (error) {
      if (!(error instanceof ConnectionShareExhausted)) throw error;
      throw rpcErrors.rateLimited(
        toolName,
        `this API key already has ${error.perKey} calls in flight to server '${this.settings.serverKey}' (its share of the server's connections) and others waiting; retry shortly`,
        1,
      );
    }
  }

  /** The holder's calls in flight and waiting under the connection share (diagnostics and tests). */
  shareUsage(holder: string): { active: number; waiting: number } {
    return this.share?.usage(holder) ?? { active: 0, waiting: 0 };
  }

  /** A fresh handshake (health checks): forgets the current session first. */
  async reinitialize(
    signal?: AbortSignal,
  ): Promise<{ protocolVersion: string; sessionId: string | undefined }> {
    this.session = undefined;
    this.established = undefined;
    const session = await this.ensureSession(signal);
    return { protocolVersion: session.protocolVersion, sessionId: session.id };
  }

  /** Ends the upstream session (best effort, as the transport asks of clients), then closes the pool. */
  async close(): Promise<void> {
    const session = this.established;
    this.session = undefined;
    this.established = undefined;
    if (session?.id !== undefined) await this.endSession(session).catch(() => {});
    await this.pool.close();
  }

  private async endSession(session: Session): Promise<void> {
    const { body } = await this.pool.request({
      path: this.path,
      method: 'DELETE',
      headers: this.headersFor(session),
      signal: AbortSignal.timeout(Math.min(this.settings.requestTimeoutMs, END_SESSION_TIMEOUT_MS)),
    });
    await body.dump();
  }

  /** Sends a request in the current session; re-initializes once if the upstream forgot the session. */
  async request(
    method: string,
    params: Record<string, unknown>,
    options: UpstreamRequestOptions = {},
  ): Promise<unknown> {
    const session = await this.ensureSession(options.signal);
    try {
      return await this.send(method, params, session, options);
    } catch (error) {
      if (!(error instanceof SessionExpired)) throw error;
      this.forget(session);
      try {
        return await this.send(method, params, await this.ensureSession(options.signal), options);
      } catch (retryError) {
        // A session refused right after its own handshake is a broken upstream, not an expired session.
        if (retryError instanceof SessionExpired) throw retryError.asFailure(method);
        throw retryError;
      }
    }
  }

  private ensureSession(signal: AbortSignal | undefined): Promise<Session> {
    if (!this.session) {
      const handshake = this.handshake().then(
        (session) => {
          if (this.session === handshake) this.established = session;
          return session;
        },
        (error: unknown) => {
          if (this.session === handshake) this.session = undefined;
          throw error;
        },
      );
      this.session = handshake;
    }
    // The handshake is shared by concurrent callers; each caller still stops waiting on its own signal.
    return signal ? raceSignal(this.session, signal) : this.session;
  }

  /** Drops the session the upstream expired, unless a newer one replaced it already. */
  private forget(session: Session): void {
    if (this.established !== session) return;
    this.established = undefined;
    this.session = undefined;
  }

  private async handshake(): Promise<Session> {
    this.initializeCount++;
    const provisional: Session = { id: undefined, protocolVersion: LATEST_PROTOCOL_VERSION };
    const response = await this.post(
      {
        method: 'initialize',
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: this.options.clientName, version: this.options.clientVersion },
        },
      },
      provisional,
      {},
      true,
    );
    const result = response.result as { protocolVersion?: unknown } | null;
    const version = result && typeof result === 'object' ? result.protocolVersion : undefined;
    if (typeof version !== 'string' || !isSupportedProtocolVersion(version)) {
      throw new UpstreamMcpError('malformed', `initialize answered an unsupported protocol version`);
    }
    const session: Session = { id: response.sessionId, protocolVersion: version };
    await this.notify('notifications/initialized', session);
    return session;
  }

  private async send(
    method: string,
    params: Record<string, unknown>,
    session: Session,
    options: UpstreamRequestOptions,
  ): Promise<unknown> {
    return (await this.post({ method, params }, session, options, false)).result;
  }

  private async notify(method: string, session: Session): Promise<void> {
    const { statusCode, body } = await this.dispatch({ jsonrpc: '2.0', method }, session, {});
    await body.dump();
    if (statusCode === 401 || statusCode === 403) throw authFailure(statusCode);
    if (statusCode >= 300)
      throw new UpstreamMcpError('http_status', `${method} answered ${statusCode}`, { status: statusCode });
  }

  private async post(
    message: { method: string; params: Record<string, unknown> },
    session: Session,
    options: UpstreamRequestOptions,
    initializing: boolean,
  ): Promise<{ result: unknown; sessionId: string | undefined }> {
    const id = this.nextId++;
    const { statusCode, headers, body, signal } = await this.dispatch(
      { jsonrpc: '2.0', id, ...message },
      session,
      options,
    );
    try {
      // 404 is how the transport says a session ended; some servers (the reference server-everything
      // among them) answer 400 to a session they no longer know. Either way: one new handshake, one retry.
      if ((statusCode === 404 || statusCode === 400) && session.id !== undefined && !initializing) {
        throw new SessionExpired(statusCode);
      }
      if (statusCode === 401 || statusCode === 403) throw authFailure(statusCode);
      if (statusCode < 200 || statusCode >= 300) {
        throw new UpstreamMcpError('http_status', `${message.method} answered HTTP ${statusCode}`, {
          status: statusCode,
        });
      }
      const contentType = String(headers['content-type'] ?? '');
      const outcome = await readJsonRpcResponse(body, contentType, id, this.options.maxResponseBytes);
      if (!outcome.ok) {
        throw new UpstreamMcpError('rpc_error', `${message.method} answered JSON-RPC error ${outcome.code}`, {
          rpcCode: outcome.code,
        });
      }
      const sessionHeader = headers['mcp-session-id'];
      return {
        result: outcome.result,
        sessionId: typeof sessionHeader === 'string' ? sessionHeader : undefined,
      };
    } catch (error) {
      throw classifyAbort(error, signal, options.signal, this.settings.requestTimeoutMs);
    } finally {
      // Stops reading (an event stream may stay open after our response); the abort is expected.
      body.on('error', () => {});
      body.destroy();
    }
  }

  private async dispatch(
    message: Record<string, unknown>,
    session: Session,
    options: UpstreamRequestOptions,
  ) {
    const timeout = AbortSignal.timeout(this.settings.requestTimeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      ...options.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...this.headersFor(session),
    };
    try {
      const response = await this.pool.request({
        path: this.path,
        method: 'POST',
        headers,
        body: JSON.stringify(message),
        signal,
      });
      return { ...response, signal };
    } catch (error) {
      throw classifyAbort(error, signal, options.signal, this.settings.requestTimeoutMs);
    }
  }

  /** The headers every request of a session carries: protocol version, session id, credentials. */
  private headersFor(session: Session): Record<string, string> {
    const headers: Record<string, string> = { 'mcp-protocol-version': session.protocolVersion };
    if (session.id !== undefined) headers['mcp-session-id'] = session.id;
    if (this.settings.token !== undefined) headers.authorization = `Bearer ${this.settings.token}`;
    return headers;
  }
}

/** Internal: the upstream no longer knows our session (HTTP 404, or 400, with a session id). */
class SessionExpired extends Error {
  readonly status: number;

  constructor(status: number) {
    super(`the upstream answered HTTP ${status} to its session`);
    this.status = status;
  }

  asFailure(method: string): UpstreamMcpError {
    return new UpstreamMcpError('http_status', `${method} answered HTTP ${this.status}`, {
      status: this.status,
    });
  }
}

function authFailure(status: number): UpstreamMcpError {
  return new UpstreamMcpError('auth', `the upstream answered HTTP ${status}`, { status });
}

/**
 * The caller's abort passes through unchanged (the executor knows why it aborted); our own timeout
 * becomes `timeout`; any other undici failure is a network failure.
 */
function classifyAbort(
  error: unknown,
  signal: AbortSignal,
  callerSignal: AbortSignal | undefined,
  timeoutMs: number,
): unknown {
  if (error instanceof UpstreamMcpError || error instanceof SessionExpired) return error;
  if (callerSignal?.aborted) return callerSignal.reason;
  if (signal.aborted) return new UpstreamMcpError('timeout', `no answer within ${timeoutMs} ms`);
  const code = (error as { code?: unknown }).code;
  if (code === 'SB_SSE_LIMIT') return new UpstreamMcpError('oversize', 'an event of the stream is too large');
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new UpstreamMcpError('timeout', `no answer within ${timeoutMs} ms`);
  }
  return new UpstreamMcpError(
    'network',
    `the connection failed (${typeof code === 'string' ? code : 'network error'})`,
  );
}

function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
