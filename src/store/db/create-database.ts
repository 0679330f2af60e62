/**
 * Opens the database named by `general_settings.database_url`: PostgreSQL for a postgres:// URL
 * (pooled, every query under a deadline: postgres-pool.ts), otherwise a SQLite file through node:sqlite
 * (WAL, foreign keys on, a bounded busy timeout).
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely, type LogEvent, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { ensurePrivateFile, ensurePrivateFolder } from '../../lib/private-files.ts';
import { adaptNodeSqlite } from './node-sqlite-database.ts';
import { createPostgresPool, readDeadlineMs, withReadDeadline } from './postgres-pool.ts';
import type { DatabaseSchema } from './tables.ts';

export type Dialect = 'postgres' | 'sqlite';

export interface Database {
  readonly db: Kysely<DatabaseSchema>;
  readonly dialect: Dialect;
  /**
   * A round trip through the pool the gateway's queries use (readiness `foreground_database`): it
   * fails or times out when the pool has no connection to spare, as the queries behind it would.
   */
  ping(signal?: AbortSignal): Promise<void>;
  /**
   * A round trip on a connection kept for health checks alone (readiness `database`): whether the
   * server answers, whatever the load of the pool. SQLite has no pool: the same as `ping`.
   */
  pingServer(signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  /** PostgreSQL schema to use (tests isolate themselves by schema); created when missing. */
  schema?: string;
  /** Called for every executed query (diagnostics, and tests that prove a path makes none). */
  onQuery?: (sql: string) => void;
  /**
   * `database_statement_timeout_ms`: PostgreSQL's statement_timeout and (plus a second) the client's
   * read deadline; SQLite's busy timeout, at most 5 s (SQLite waits synchronously, holding the event
   * loop). 0: no deadline (migrations, which may rewrite a large table). Default 30 s.
   */
  statementTimeoutMs?: number;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
/** The health connection's deadline: the readiness deadline (a pool query that fails evicts its client). */
const HEALTH_TIMEOUT_MS = 1_000;
/** SQLite's busy wait blocks the process; it is never longer than this. */
const MAX_SQLITE_BUSY_MS = 5_000;

// Epoch-millisecond timestamps and counters fit in a double; read int8 as a number, not a string.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export async function createDatabase(options: DatabaseOptions): Promise<Database> {
  if (/^postgres(ql)?:\/\//.test(options.url)) return createPostgres(options);
  return createSqlite(options);
}

async function createPostgres(options: DatabaseOptions): Promise<Database> {
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const poolOptions = {
    url: options.url,
    statementTimeoutMs,
    ...(options.schema ? { schema: options.schema } : {}),
  };
  const pool = createPostgresPool({ ...poolOptions, max: options.poolSize });
  if (options.schema) {
    const client = await pool.connect();
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema.replaceAll('"', '')}"`);
    } finally {
      client.release();
    }
  }
  const db = new Kysely<DatabaseSchema>({
    dialect: new PostgresDialect({ pool: withReadDeadline(pool, readDeadlineMs(statementTimeoutMs)) }),
    log: queryLogger(options),
  });
  // One connection of its own, opened at the first health check: a saturated pool must not look like
  // a server that does not answer. Its read deadline is the readiness deadline's business.
  let health: pg.Pool | undefined;
  return {
    db,
    dialect: 'postgres',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    pingServer: async () => {
      health ??= createPostgresPool({
        ...poolOptions,
        max: 1,
        statementTimeoutMs: HEALTH_TIMEOUT_MS,
        queryTimeoutMs: readDeadlineMs(HEALTH_TIMEOUT_MS),
      });
      await health.query('select 1');
    },
    close: async () => {
      await Promise.all([db.destroy(), health?.end()]);
    },
  };
}

async function createSqlite(options: DatabaseOptions): Promise<Database> {
  const file = options.url.replace(/^sqlite:(\/\/)?/, '');
  if (file !== ':memory:') {
    // SQLite gives the -wal and -shm files the database file's mode, so a private file keeps them private.
    ensurePrivateFolder(dirname(file));
    for (const path of [file, `${file}-wal`, `${file}-shm`])
      if (path === file || existsSync(path)) ensurePrivateFile(path);
  }
  const database = new DatabaseSync(file);
  // WAL with synchronous=NORMAL: a commit survives the process dying (kill -9) without an fsync per
  // transaction; only an operating-system crash may lose the last commits (SQLite's advice for WAL).
  const busyMs = Math.min(options.statementTimeoutMs || MAX_SQLITE_BUSY_MS, MAX_SQLITE_BUSY_MS);
  database.exec(
    `PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = ${busyMs}; PRAGMA foreign_keys = ON;`,
  );
  const db = new Kysely<DatabaseSchema>({
    dialect: new SqliteDialect({ database: adaptNodeSqlite(database) }),
    log: queryLogger(options),
  });
  const ping = async () => {
    await sql`select 1`.execute(db);
  };
  return { db, dialect: 'sqlite', ping, pingServer: ping, close: () => db.destroy() };
}

function queryLogger(options: DatabaseOptions): ((event: LogEvent) => void) | undefined {
  const { onQuery } = options;
  return onQuery ? (event) => onQuery(event.query.sql) : undefined;
}
