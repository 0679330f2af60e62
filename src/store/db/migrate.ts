/**
 * Applies the versioned migrations in order; the same list runs on SQLite and PostgreSQL. On PostgreSQL
 * the whole run holds an advisory lock (per schema), so replicas starting together against a fresh
 * database wait for each other instead of racing to create the migrator's own tables; each statement
 * waits at most `lock_timeout` for a table lock, so a migration stuck behind a long transaction fails
 * instead of queueing every query on that table behind it.
 */
import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import type { Database } from './create-database.ts';
import * as identities from './migrations/0001-identities.ts';
import * as mcp from './migrations/0002-mcp.ts';
import * as keyCreator from './migrations/0003-key-creator.ts';
import * as spend from './migrations/0004-spend.ts';
import * as budgets from './migrations/0005-budgets.ts';
import * as audit from './migrations/0006-audit.ts';
import * as cacheEnabled from './migrations/0007-cache-enabled.ts';
import * as tierPolicies from './migrations/0008-tier-policies.ts';
import * as batches from './migrations/0009-batches.ts';
import * as batchFinalizationLeases from './migrations/0010-batch-finalization-leases.ts';
import * as spendUsageEstimated from './migrations/0011-spend-usage-estimated.ts';
import * as keyCreatorLineage from './migrations/0012-key-creator-lineage.ts';
import * as mcpPolicyCeiling from './migrations/0013-mcp-policy-ceiling.ts';
import * as batchFileChunks from './migrations/0014-batch-file-chunks.ts';

const migrations: Record<string, Migration> = {
  '0001-identities': identities,
  '0002-mcp': mcp,
  '0003-key-creator': keyCreator,
  '0004-spend': spend,
  '0005-budgets': budgets,
  '0006-audit': audit,
  '0007-cache-enabled': cacheEnabled,
  '0008-tier-policies': tierPolicies,
  '0009-batches': batches,
  '0010-batch-finalization-leases': batchFinalizationLeases,
  '0011-spend-usage-estimated': spendUsageEstimated,
  '0012-key-creator-lineage': keyCreatorLineage,
  '0013-mcp-policy-ceiling': mcpPolicyCeiling,
  '0014-batch-file-chunks': batchFileChunks,
};

export interface MigrationReport {
  applied: string[];
  /**
   * Migrations the database has that this build does not know: a newer build migrated it and this one
   * is a rollback (spec versioning rule 5 keeps the additive columns). Nothing is applied then.
   */
  ahead: string[];
}

/** An arbitrary second key, so our lock does not collide with other users of hashtext(schema). */
const LOCK_NAMESPACE = 730_2026;
/** How often a process waiting for another one's migrations asks for the lock again. */
const LOCK_POLL_MS = 200;
export const DEFAULT_MIGRATION_LOCK_TIMEOUT_MS = 10_000;

export interface MigrateOptions {
  /** PostgreSQL lock_timeout of every migration statement (`database_migration_lock_timeout_ms`). */
  lockTimeoutMs?: number;
  /** Stops waiting for another process's migrations (a SIGTERM during start-up). */
  signal?: AbortSignal;
  /** Called once when another process holds the migration lock. */
  onWait?: () => void;
}

export async function migrateToLatest(
  database: Pick<Database, 'db' | 'dialect'>,
  options: MigrateOptions = {},
): Promise<MigrationReport> {
  if (database.dialect !== 'postgres') return migrate(database.db);
  const lockTimeout = `${options.lockTimeoutMs ?? DEFAULT_MIGRATION_LOCK_TIMEOUT_MS}ms`;
  // One connection holds the lock and runs the migrations, so a pool of one cannot deadlock.
  return database.db.connection().execute(async (connection) => {
    await takeMigrationLock(connection, options);
    try {
      await sql`select set_config('lock_timeout', ${lockTimeout}, false)`.execute(connection);
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(connection);
      return await migrate(connection, rows[0]?.schema, lockTimeout);
    } finally {
      await sql`select pg_advisory_unlock(hashtext(current_schema()), ${LOCK_NAMESPACE})`.execute(connection);
      await sql`reset lock_timeout`.execute(connection);
    }
  });
}

/**
 * Polls for the lock instead of waiting inside PostgreSQL: a process stopped meanwhile leaves no
 * backend queued for the lock, and the wait can end on `signal`.
 */
// biome-ignore lint/suspicious/noExplicitAny: runs before the schema's version is known
async function takeMigrationLock(connection: Kysely<any>, options: MigrateOptions): Promise<void> {
  for (let waited = false; ; waited = true) {
    options.signal?.throwIfAborted();
    const { rows } = await sql<{
      locked: boolean | null;
    }>`select pg_try_advisory_lock(hashtext(current_schema()), ${LOCK_NAMESPACE}) as locked`.execute(
      connection,
    );
    // No schema of the search path exists (a misspelled schema): nothing could be created anyway.
    if (rows[0]?.locked === null) throw new Error('no schema of the search path exists: create it first');
    if (rows[0]?.locked) return;
    if (!waited) options.onWait?.();
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
async function migrate(db: Kysely<any>, schema?: string, lockTimeout?: string): Promise<MigrationReport> {
  // Without the schema, Kysely looks for its bookkeeping tables in every schema of the database and
  // skips creating its own when another schema has them (then fails: "relation does not exist").
  const migrator = new Migrator({
    db,
    provider: {
      getMigrations: async () => (lockTimeout ? withLockTimeout(migrations, lockTimeout) : migrations),
    },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  // Kysely refuses a database holding migrations it was not given ("previously executed migration …
  // is missing"), which would stop a rolled-back build from starting at all. Migrations are additive,
  // so an older build runs on the newer schema as long as it has every migration it knows about.
  const executed = await executedMigrations(db, schema);
  const ahead = executed.filter((name) => !(name in migrations));
  if (ahead.length > 0) {
    const missing = Object.keys(migrations).filter((name) => !executed.includes(name));
    if (missing.length > 0)
      throw new Error(
        `the database holds migrations this build does not know (${ahead.join(', ')}) but lacks ${missing.join(', ')}: ` +
          'migrate it with the build that applied the newer migrations',
      );
    return { applied: [], ahead };
  }
  // Nothing to apply: skip the migrator, whose start-up introspection reads every schema's tables and
  // fails when another schema of the database is dropped meanwhile (seen in the fault suite).
  if (Object.keys(migrations).every((name) => executed.includes(name))) return { applied: [], ahead: [] };
  const { error, results } = await migrateRetryingIntrospection(migrator, schema);
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    const lockWait =
      (error as { code?: unknown }).code === '55P03'
        ? ' (a transaction held a lock on its table longer than database_migration_lock_timeout_ms; nothing was changed: start again once it ends)'
        : '';
    throw new Error(
      `database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}${lockWait}`,
    );
  }
  return { applied: (results ?? []).map((result) => result.migrationName), ahead: [] };
}

/**
 * The migrator's start-up introspection reads every schema's tables, and fails (3F000) when another
 * schema of the database is dropped at that moment. Nothing was applied then (the run is one
 * transaction on PostgreSQL), so the run is tried again, a few times.
 */
async function migrateRetryingIntrospection(migrator: Migrator, schema?: string) {
  for (let attempt = 1; ; attempt++) {
    const outcome = await migrator.migrateToLatest();
    const error = outcome.error as { code?: unknown; message?: unknown } | undefined;
    const otherSchemaGone =
      error?.code === '3F000' && !(schema && String(error.message).includes(`"${schema}"`));
    if (!otherSchemaGone || attempt === 3) return outcome;
  }
}

/**
 * Kysely's migrator sets a transaction-local lock_timeout of one hour for its own lock; each migration
 * sets ours again inside the transaction, so its statements give up on a held table lock in time.
 */
function withLockTimeout(list: Record<string, Migration>, lockTimeout: string): Record<string, Migration> {
  return Object.fromEntries(
    Object.entries(list).map(([name, migration]) => [
      name,
      {
        ...migration,
        // biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
        up: async (db: Kysely<any>) => {
          await sql`select set_config('lock_timeout', ${lockTimeout}, true)`.execute(db);
          await migration.up(db);
        },
      },
    ]),
  );
}

/** Names in Kysely's bookkeeping table; none when it does not exist yet (a fresh database). */
// biome-ignore lint/suspicious/noExplicitAny: read before the schema's version is known
async function executedMigrations(db: Kysely<any>, schema?: string): Promise<string[]> {
  const table = schema ? `${schema}.kysely_migration` : 'kysely_migration';
  const exists = schema
    ? await sql<{
        found: string | null;
      }>`select to_regclass(${`"${schema}".kysely_migration`}) as found`.execute(db)
    : await sql<{
        found: string | null;
      }>`select name as found from sqlite_master where type = 'table' and name = 'kysely_migration'`.execute(
        db,
      );
  if (!exists.rows[0]?.found) return [];
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(db);
  return rows.map((row) => row.name);
}
