/**
 * Opens (and by default migrates) a database at start; failing that, one error naming the setting
 * that names it. Migrations run on a connection of their own, without a statement deadline (one may
 * rewrite a large table) but with a lock deadline, closed before the serving pool opens.
 */
import { createDatabase, type Database } from './create-database.ts';
import { DatabaseUnreachableError } from './database-unreachable.ts';
import { type MigrationReport, migrateToLatest } from './migrate.ts';

export interface OpenDatabaseOptions {
  /** The configuration key that names the database, for the error (default general_settings.database_url). */
  setting?: string;
  databaseSchema?: string;
  migrate?: boolean;
  logger?: { warn(message: string): void; info?(message: string): void; flush?(): void };
  /** database_statement_timeout_ms of the serving pool. */
  statementTimeoutMs?: number;
  /** database_migration_lock_timeout_ms. */
  migrationLockTimeoutMs?: number;
  /** A stop during start-up: waiting for another process's migrations ends. */
  signal?: AbortSignal;
}

export async function openDatabase(
  url: string,
  poolSize: number,
  options: OpenDatabaseOptions,
): Promise<Database> {
  try {
    if (options.migrate ?? true) await migrateDatabase(url, options);
    return await createDatabase({
      url,
      poolSize,
      ...(options.databaseSchema ? { schema: options.databaseSchema } : {}),
      ...(options.statementTimeoutMs !== undefined ? { statementTimeoutMs: options.statementTimeoutMs } : {}),
    });
  } catch (error) {
    throw new DatabaseUnreachableError(url, error, options.setting);
  }
}

/** Applies the migrations on a connection of its own, closed afterwards; warns when the database is ahead. */
export async function migrateDatabase(url: string, options: OpenDatabaseOptions): Promise<MigrationReport> {
  const database = await createDatabase({
    url,
    poolSize: 1,
    statementTimeoutMs: 0,
    ...(options.databaseSchema ? { schema: options.databaseSchema } : {}),
  });
  try {
    const report = await migrateToLatest(database, {
      ...(options.migrationLockTimeoutMs !== undefined
        ? { lockTimeoutMs: options.migrationLockTimeoutMs }
        : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      onWait: () => {
        options.logger?.info?.('waiting for another process to finish the database migrations');
        options.logger?.flush?.(); // a start-up that seems stuck says why at once
      },
    });
    warnWhenAhead(report, options.logger);
    return report;
  } finally {
    await database.close();
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
