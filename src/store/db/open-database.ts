/** Opens (and by default migrates) a database at start; failing that, one error naming database_url. */
import { createDatabase, type Database } from './create-database.ts';
import { DatabaseUnreachableError } from './database-unreachable.ts';
import { migrateToLatest } from './migrate.ts';

export async function openDatabase(
  url: string,
  poolSize: number,
  options: { databaseSchema?: string; migrate?: boolean },
): Promise<Database> {
  let database: Database | undefined;
  try {
    database = await createDatabase({
      url,
      poolSize,
      ...(options.databaseSchema ? { schema: options.databaseSchema } : {}),
    });
    if (options.migrate ?? true) await migrateToLatest(database);
    return database;
  } catch (error) {
    await database?.close().catch(() => {});
    throw new DatabaseUnreachableError(url, error);
  }
}
