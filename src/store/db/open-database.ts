/** Opens (and by default migrates) a database at start; failing that, one error naming database_url. */
import { createDatabase, type Database } from './create-database.ts';
import { DatabaseUnreachableError } from './database-unreachable.ts';
import { type MigrationReport, migrateToLatest } from './migrate.ts';

export async function openDatabase(
  url: string,
  poolSize: number,
  options: { databaseSchema?: string; migrate?: boolean; logger?: { warn(message: string): void } },
): Promise<Database> {
  let database: Database | undefined;
  try {
    database = await createDatabase({
      url,
      poolSize,
      ...(options.databaseSchema ? { schema: options.databaseSchema } : {}),
    });
    if (options.migrate ?? true) warnWhenAhead(await migrateToLatest(database), options.logger);
    return database;
  } catch (error) {
    await database?.close().catch(() => {});
    throw new DatabaseUnreachableError(url, error);
  }
}

/** A rolled-back build starts on a newer schema; say so, since the newer build's features are inert here. */
export function warnWhenAhead(report: MigrationReport, logger?: { warn(message: string): void }): void {
  if (report.ahead.length === 0) return;
  logger?.warn(
    `the database was migrated by a newer build (${report.ahead.join(', ')} unknown to this one): ` +
      'running on it unchanged, as a rollback does; the newer migrations stay in place',
  );
}
