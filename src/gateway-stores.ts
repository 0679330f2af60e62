/**
 * Opens what the gateway stores its state in, at start: the main database (migrated unless told not
 * to), spend's telemetry database when `telemetry_database_url` names another, and the shared store.
 * Each is left with the start-up scope, so a stop during start-up closes what was opened.
 */

import type { GatewayOptions } from './gateway.ts';
import type { Clock } from './lib/clock.ts';
import type { Logger } from './observability/logger.ts';
import type { StartupScope } from './process-lifecycle.ts';
import type { Database } from './store/db/create-database.ts';
import { type OpenDatabaseOptions, openDatabase } from './store/db/open-database.ts';
import { createSharedStore } from './store/shared/create-shared-store.ts';
import type { SharedStore } from './store/shared/shared-store.ts';

export interface GatewayStores {
  database: Database;
  /** Where spend lives: `database` itself unless telemetry_database_url names another. */
  telemetry: Database;
  store: SharedStore;
}

export async function openGatewayStores(
  options: GatewayOptions,
  clock: Clock,
  logger: Logger,
): Promise<GatewayStores> {
  const general = options.config.general_settings;
  const startup: StartupScope | undefined = options.startup;
  const opening: OpenDatabaseOptions = {
    logger,
    statementTimeoutMs: general.database_statement_timeout_ms,
    migrationLockTimeoutMs: general.database_migration_lock_timeout_ms,
    ...(options.databaseSchema ? { databaseSchema: options.databaseSchema } : {}),
    ...(options.migrate !== undefined ? { migrate: options.migrate } : {}),
    ...(startup ? { signal: startup.signal } : {}),
  };
  const database = await openDatabase(general.database_url, general.database_pool_size, opening);
  startup?.track(() => database.close());
  const telemetry =
    general.telemetry_database_url === general.database_url
      ? database
      : await openDatabase(general.telemetry_database_url, general.database_pool_size, {
          ...opening,
          setting: 'general_settings.telemetry_database_url',
        });
  if (telemetry !== database) startup?.track(() => telemetry.close());
  const store = await createSharedStore(general, {
    clock,
    prefix: options.storePrefix ?? general.redis_key_prefix,
    warn: (message) => logger.warn(message),
    ...(options.storeClock ? { storeClock: options.storeClock } : {}),
  });
  startup?.track(() => store.close());
  return { database, telemetry, store };
}
