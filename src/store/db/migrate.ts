/** Applies the versioned migrations in order; the same list runs on SQLite and PostgreSQL. */
import { type Kysely, type Migration, Migrator, PostgresAdapter, sql } from 'kysely';
import * as identities from './migrations/0001-identities.ts';
import * as mcp from './migrations/0002-mcp.ts';

const migrations: Record<string, Migration> = {
  '0001-identities': identities,
  '0002-mcp': mcp,
};

export interface MigrationReport {
  applied: string[];
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationReport> {
  const migrationTableSchema = await currentPostgresSchema(db);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    ...(migrationTableSchema !== undefined ? { migrationTableSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(
      `database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return { applied: (results ?? []).map((result) => result.migrationName) };
}

/**
 * The schema unqualified tables go to on PostgreSQL. Without it Kysely finds its migration tables in any
 * schema of the database and skips creating them in ours (then fails: relation does not exist).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
async function currentPostgresSchema(db: Kysely<any>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}
