/**
 * Opens the database named by `general_settings.database_url`: PostgreSQL for a postgres:// URL
 * (pooled), otherwise a SQLite file through node:sqlite (WAL, foreign keys on, busy timeout).
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely, type LogEvent, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { ensurePrivateFile, ensurePrivateFolder } from '../../lib/private-files.ts';
import { adaptNodeSqlite } from './node-sqlite-database.ts';
import type { DatabaseSchema } from './tables.ts';

export type Dialect = 'postgres' | 'sqlite';

export interface Database {
  readonly db: Kysely<DatabaseSchema>;
  readonly dialect: Dialect;
  /** A cheap round trip for readiness. */
  ping(signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  /** PostgreSQL schema to use (tests isolate themselves by schema); created when missing. */
  schema?: string;
  /** Called for every executed query (diagnostics, and tests that prove a path makes none). */
  onQuery?: (sql: string) => void;
}

// Epoch-millisecond timestamps and counters fit in a double; read int8 as a number, not a string.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export async function createDatabase(options: DatabaseOptions): Promise<Database> {
  if (/^postgres(ql)?:\/\//.test(options.url)) return createPostgres(options);
  return createSqlite(options);
}

async function createPostgres(options: DatabaseOptions): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    connectionTimeoutMillis: 5_000,
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
  if (options.schema) {
    const client = await pool.connect();
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema.replaceAll('"', '')}"`);
    } finally {
      client.release();
    }
  }
  const db = new Kysely<DatabaseSchema>({
    dialect: new PostgresDialect({ pool }),
    log: queryLogger(options),
  });
  return {
    db,
    dialect: 'postgres',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
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
  database.exec(
    'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;',
  );
  const db = new Kysely<DatabaseSchema>({
    dialect: new SqliteDialect({ database: adaptNodeSqlite(database) }),
    log: queryLogger(options),
  });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

function queryLogger(options: DatabaseOptions): ((event: LogEvent) => void) | undefined {
  const { onQuery } = options;
  return onQuery ? (event) => onQuery(event.query.sql) : undefined;
}
