/**
 * Migrations: replicas starting together against a fresh PostgreSQL schema must not race (regression:
 * two gateways migrating at once failed with `relation "kysely_migration_lock" does not exist`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/store/db/create-database.ts';
import { migrateToLatest } from '../../src/store/db/migrate.ts';
import { dropSchema } from '../support/backends.ts';
import { realBackendsAvailable, TEST_DATABASE_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

describe.runIf(await realBackendsAvailable())('migrations on PostgreSQL', () => {
  const schema = uniqueName('t');
  const databases: Database[] = [];
  afterAll(async () => {
    for (const database of databases) await database.close();
    await dropSchema(schema);
  });

  it('lets four replicas migrate a fresh schema at once: one applies, the others find it done', async () => {
    for (let index = 0; index < 4; index++) {
      databases.push(await createDatabase({ url: TEST_DATABASE_URL, poolSize: 1, schema }));
    }
    const reports = await Promise.all(databases.map((database) => migrateToLatest(database)));
    const applied = reports.map((report) => report.applied.length).sort();
    expect(applied).toEqual([0, 0, 0, 14]);
  });

  it('creates its own bookkeeping tables even when another schema of the database has them', async () => {
    const other = uniqueName('t');
    const database = await createDatabase({ url: TEST_DATABASE_URL, poolSize: 1, schema: other });
    try {
      expect((await migrateToLatest(database)).applied).toEqual([
        '0001-identities',
        '0002-mcp',
        '0003-key-creator',
        '0004-spend',
        '0005-budgets',
        '0006-audit',
        '0007-cache-enabled',
        '0008-tier-policies',
        '0009-batches',
        '0010-batch-finalization-leases',
        '0011-spend-usage-estimated',
        '0012-key-creator-lineage',
        '0013-mcp-policy-ceiling',
        '0014-batch-file-chunks',
      ]);
      expect((await migrateToLatest(database)).applied).toEqual([]);
    } finally {
      await database.close();
      await dropSchema(other);
    }
  });
});

// Spec versioning rule 5: a rollback keeps the additive columns, so the older build must start on the
// newer schema. Kysely alone refuses a database holding migrations it was not given.
const migrationBackends = (await realBackendsAvailable()) ? [false, true] : [false];

describe('a database migrated by a newer build', () => {
  async function withDatabase(postgres: boolean, run: (database: Database) => Promise<void>): Promise<void> {
    const schema = uniqueName('t');
    const dir = mkdtempSync(join(tmpdir(), 'migrate-ahead-'));
    const database = await createDatabase(
      postgres
        ? { url: TEST_DATABASE_URL, poolSize: 1, schema }
        : { url: `sqlite://${join(dir, 'gateway.db')}`, poolSize: 1 },
    );
    try {
      await run(database);
    } finally {
      await database.close();
      if (postgres) await dropSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    }
  }

  for (const postgres of migrationBackends) {
    const name = postgres ? 'PostgreSQL' : 'SQLite';
    it(`${name}: an older build starts on it, applying nothing and naming the unknown migrations`, async () => {
      await withDatabase(postgres, async (database) => {
        await migrateToLatest(database);
        await sql`insert into kysely_migration (name, timestamp) values ('9999-from-a-newer-build', '2027-01-01T00:00:00.000Z')`.execute(
          database.db,
        );
        expect(await migrateToLatest(database)).toEqual({ applied: [], ahead: ['9999-from-a-newer-build'] });
      });
    });

    it(`${name}: a database ahead of this build yet missing one of its migrations is refused, naming both`, async () => {
      await withDatabase(postgres, async (database) => {
        await migrateToLatest(database);
        await sql`insert into kysely_migration (name, timestamp) values ('9999-from-a-newer-build', '2027-01-01T00:00:00.000Z')`.execute(
          database.db,
        );
        await sql`delete from kysely_migration where name = '0010-batch-finalization-leases'`.execute(
          database.db,
        );
        await expect(migrateToLatest(database)).rejects.toThrow(
          /9999-from-a-newer-build.*lacks 0010-batch-finalization-leases/,
        );
      });
    });
  }
});
