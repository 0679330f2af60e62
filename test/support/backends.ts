/**
 * The two storage set-ups every storage-facing suite runs against: the embedded default (a SQLite file
 * and the in-memory shared store) and production (PostgreSQL in a private schema, Redis under a private
 * key prefix). Nothing is flushed or reconfigured on the shared servers; a test's schema is dropped
 * when it ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createDatabase, type Database } from '../../src/store/db/create-database.ts';
import { migrateToLatest } from '../../src/store/db/migrate.ts';
import { REQUIRE_REAL_BACKENDS, TEST_DATABASE_URL, TEST_REDIS_URL } from './test-env.ts';
import { uniqueName } from './unique-name.ts';

export interface Backend {
  name: 'sqlite+memory' | 'postgres+redis';
  databaseUrl: string;
  redisUrl: string | undefined;
  /** PostgreSQL schema (postgres only). */
  schema: string | undefined;
  /** Shared-store key prefix. */
  prefix: string;
  /** YAML lines for general_settings that select this backend. */
  generalSettingsYaml: string;
  /** Drops the schema or deletes the files. */
  cleanup(): Promise<void>;
}

export function sqliteBackend(): Backend {
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-test-'));
  const databaseUrl = join(folder, 'switchboard.db');
  return {
    name: 'sqlite+memory',
    databaseUrl,
    redisUrl: undefined,
    schema: undefined,
    prefix: uniqueName('sb'),
    generalSettingsYaml: `  database_url: ${JSON.stringify(databaseUrl)}\n`,
    async cleanup() {
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

export function postgresBackend(): Backend {
  const schema = uniqueName('t');
  const prefix = `${uniqueName('sb')}:`;
  return {
    name: 'postgres+redis',
    databaseUrl: TEST_DATABASE_URL,
    redisUrl: TEST_REDIS_URL,
    schema,
    prefix,
    // A loaded test machine can answer Redis slower than the 50 ms default; a timeout would move a
    // test onto per-process counters (fail_open). Detection of a dropped connection stays immediate.
    generalSettingsYaml: `  database_url: ${JSON.stringify(TEST_DATABASE_URL)}\n  redis_url: ${JSON.stringify(TEST_REDIS_URL)}\n  redis_command_timeout_ms: 1000\n`,
    async cleanup() {
      await dropSchema(schema);
    },
  };
}

/** The backend's database (its own schema on PostgreSQL), migrated unless `migrate` is false. */
export async function openBackendDatabase(
  backend: Backend,
  { poolSize = 4, migrate = true }: { poolSize?: number; migrate?: boolean } = {},
): Promise<Database> {
  const database = await createDatabase({
    url: backend.databaseUrl,
    poolSize,
    ...(backend.schema ? { schema: backend.schema } : {}),
  });
  if (migrate) await migrateToLatest(database);
  return database;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Both backends when the real servers are there; only the embedded one otherwise (unless required). */
export const backendFactories: ReadonlyArray<readonly [string, () => Backend]> = [
  ['sqlite+memory', sqliteBackend],
  ['postgres+redis', postgresBackend],
];

export { REQUIRE_REAL_BACKENDS };
