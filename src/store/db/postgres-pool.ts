/**
 * PostgreSQL connection pools with deadlines (issue 31): `statement_timeout` on every connection (a
 * locked table, a runaway query), a client-side read deadline for a server that stops answering
 * altogether (SIGSTOP, a frozen host: the server cannot enforce its own timeout then), TCP keepalive for
 * a peer that vanished, and a bounded connect. A connection whose read deadline passed is discarded,
 * never lent out again with its query still pending on it.
 */
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import pg from 'pg';

/** How long taking a new connection may last (an unreachable or stalled server). */
const CONNECT_TIMEOUT_MS = 5_000;
/** Idle seconds before the first keepalive probe: a peer that vanished is found in about a minute. */
const KEEPALIVE_IDLE_MS = 30_000;
/** The client's read deadline is the server's statement_timeout plus this margin (the server's own error first). */
const READ_MARGIN_MS = 1_000;

export interface PostgresPoolOptions {
  url: string;
  max: number;
  /** PostgreSQL schema on the search path. */
  schema?: string;
  /** statement_timeout of every connection, and base of the client read deadline; 0: neither. */
  statementTimeoutMs: number;
  /** node-postgres's own read deadline, for a pool used through pool.query (the health check's). */
  queryTimeoutMs?: number;
}

/** The server stopped answering a query on this connection; the connection is dropped. */
export class DatabaseReadTimeoutError extends Error {
  /** A socket that timed out, as far as callers are concerned (lib/database-outage.ts: an outage). */
  readonly code = 'ETIMEDOUT';
  constructor(deadlineMs: number) {
    super(`the database did not answer within ${deadlineMs} ms; the connection was dropped`);
    this.name = 'DatabaseReadTimeoutError';
  }
}

export function createPostgresPool(options: PostgresPoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    // Operators can tell the gateway's sessions apart in pg_stat_activity.
    application_name: 'switchboard',
    ...(options.statementTimeoutMs > 0 ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle client that loses its connection emits 'error'; without a listener that kills the process.
  pool.on('error', () => {});
  // So does a checked-out one (the pool drops its idle listener while it is lent out): a server that
  // stops or restarts while a transaction holds a connection crashed the gateway. Its pending and
  // later queries fail, and the pool discards it on release.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

/** The client read deadline that goes with a statement timeout (0: none). */
export function readDeadlineMs(statementTimeoutMs: number): number {
  return statementTimeoutMs > 0 ? statementTimeoutMs + READ_MARGIN_MS : 0;
}

/** The pool as Kysely sees it, with the read deadline on every query of every lent connection. */
export function withReadDeadline(pool: pg.Pool, deadlineMs: number): PostgresPool {
  return {
    connect: async () => new DeadlineClient(await pool.connect(), deadlineMs),
    end: () => pool.end(),
  };
}

class DeadlineClient implements PostgresPoolClient {
  private readonly client: pg.PoolClient;
  private readonly deadlineMs: number;
  /** Set when a read deadline passed: the connection may still carry the late query, so it is dropped. */
  private broken: Error | undefined;

  constructor(client: pg.PoolClient, deadlineMs: number) {
    this.client = client;
    this.deadlineMs = deadlineMs;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    input: string | PostgresCursor<R>,
    parameters?: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Streams (cursors) read at the caller's pace: each read is bounded by statement_timeout alone.
    if (typeof input !== 'string') return this.client.query(input as never) as PostgresCursor<R>;
    // Nothing more is sent on a connection whose answer is overdue (a rollback would wait behind it).
    if (this.broken) return Promise.reject(this.broken);
    const running = this.client.query(input, parameters as unknown[]) as unknown as Promise<
      PostgresQueryResult<R>
    >;
    if (this.deadlineMs <= 0) return running;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.broken = new DatabaseReadTimeoutError(this.deadlineMs);
        reject(this.broken);
      }, this.deadlineMs);
      running.then(
        (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  release(): void {
    // An error makes the pool destroy the client instead of keeping it idle.
    this.client.release(this.broken);
  }
}
