/**
 * Applies the versioned migrations in order; the same list runs on SQLite and PostgreSQL. On PostgreSQL
 * the whole run holds an advisory lock (per schema), so replicas starting together against a fresh
 * database wait for each other instead of racing to create the migrator's own tables.
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
import * as batchFileChunks from './migrations/0011-batch-file-chunks.ts';

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
  '0011-batch-file-chunks': batchFileChunks,
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

export async function migrateToLatest(database: Pick<Database, 'db' | 'dialect'>): Promise<MigrationReport> {
  if (database.dialect !== 'postgres') return migrate(database.db);
  // One connection holds the lock and runs the migrations, so a pool of one cannot deadlock.
  return database.db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(hashtext(current_schema()), ${LOCK_NAMESPACE})`.execute(connection);
    try {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(connection);
      return await migrate(connection, rows[0]?.schema);
    } finally {
      await sql`select pg_advisory_unlock(hashtext(current_schema()), ${LOCK_NAMESPACE})`.execute(connection);
    }
  });
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
async function migrate(db: Kysely<any>, schema?: string): Promise<MigrationReport> {
  // Without the schema, Kysely looks for its bookkeeping tables in every schema of the database and
  // skips creating its own when another schema has them (then fails: "relation does not exist").
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
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
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(
      `database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return { applied: (results ?? []).map((result) => result.migrationName), ahead: [] };
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
