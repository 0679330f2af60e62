/**
 * Regression: migrations on PostgreSQL when another schema of the same database already holds Kysely's
 * migration tables. Kysely looks for its lock table in every schema unless told which one, so a second
 * schema skipped creating its own and failed ("relation kysely_migration_lock does not exist"). Tests
 * isolate by schema, so parallel test files tripped over it; so would two deployments in one database.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/store/db/create-database.ts';
import { migrateToLatest } from '../../src/store/db/migrate.ts';
import { dropSchema } from '../support/backends.ts';
import { realBackendsAvailable, TEST_DATABASE_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

describe.runIf(await realBackendsAvailable())('migrations on PostgreSQL beside other schemas', () => {
  const schemas = [uniqueName('m'), uniqueName('m')];
  const databases: Database[] = [];

  afterAll(async () => {
    for (const database of databases) await database.close();
    for (const schema of schemas) await dropSchema(schema);
  });

  it('migrates a schema when another schema of the database is migrated already', async () => {
    for (const schema of schemas) {
      const database = await createDatabase({ url: TEST_DATABASE_URL, poolSize: 2, schema });
      databases.push(database);
      expect((await migrateToLatest(database.db)).applied).toEqual(['0001-identities', '0002-mcp']);
    }
    for (const database of databases) expect((await migrateToLatest(database.db)).applied).toEqual([]);
  });
});
