/** Applies the versioned migrations in order; the same list runs on SQLite and PostgreSQL. */
import { type Kysely, type Migration, Migrator } from 'kysely';
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
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(
      `database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return { applied: (results ?? []).map((result) => result.migrationName) };
}
