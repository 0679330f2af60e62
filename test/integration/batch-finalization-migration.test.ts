/**
 * Migration 0010 on SQLite and PostgreSQL: a batch whose finalizer died before finalization leases
 * existed (finalized = 1, status not terminal) is opened again, so a worker finalizes it; a terminal
 * batch keeps finalized = 1.
 */
import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/store/db/create-database.ts';
import * as m1 from '../../src/store/db/migrations/0001-identities.ts';
import * as m2 from '../../src/store/db/migrations/0002-mcp.ts';
import * as m3 from '../../src/store/db/migrations/0003-key-creator.ts';
import * as m4 from '../../src/store/db/migrations/0004-spend.ts';
import * as m5 from '../../src/store/db/migrations/0005-budgets.ts';
import * as m6 from '../../src/store/db/migrations/0006-audit.ts';
import * as m7 from '../../src/store/db/migrations/0007-cache-enabled.ts';
import * as m8 from '../../src/store/db/migrations/0008-tier-policies.ts';
import * as m9 from '../../src/store/db/migrations/0009-batches.ts';
import * as m10 from '../../src/store/db/migrations/0010-batch-finalization-leases.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';

const before: Record<string, Migration> = {
  '0001-identities': m1,
  '0002-mcp': m2,
  '0003-key-creator': m3,
  '0004-spend': m4,
  '0005-budgets': m5,
  '0006-audit': m6,
  '0007-cache-enabled': m7,
  '0008-tier-policies': m8,
  '0009-batches': m9,
};

describe.each(await availableBackends())('migration 0010 on %s', (_name, makeBackend) => {
  let backend: Backend;
  let database: Database;

  beforeAll(async () => {
    backend = makeBackend();
    database = await createDatabase({
      url: backend.databaseUrl,
      poolSize: 1,
      ...(backend.schema ? { schema: backend.schema } : {}),
    });
  });
  afterAll(async () => {
    await database?.close();
    await backend?.cleanup();
  });

  const migrator = (migrations: Record<string, Migration>) =>
    new Migrator({
      db: database.db as Kysely<any>,
      provider: { getMigrations: async () => migrations },
      ...(backend.schema ? { migrationTableSchema: backend.schema } : {}),
    });

  it('reopens batches stuck finalizing and leaves terminal ones', async () => {
    expect((await migrator(before).migrateToLatest()).error).toBeUndefined();
    for (const [id, status] of [
      ['batch_stuck', 'finalizing'],
      ['batch_done', 'completed'],
    ] as const)
      await sql`INSERT INTO batches (id, owner_key_id, endpoint, input_file_id, completion_window, status,
        created_at, finalized) VALUES (${id}, 'k', '/v1/embeddings', 'file-in', '24h', ${status}, 1, 1)`.execute(
        database.db,
      );
    const all = { ...before, '0010-batch-finalization-leases': m10 };
    expect((await migrator(all).migrateToLatest()).error).toBeUndefined();
    const rows = await database.db.selectFrom('batches').select(['id', 'finalized']).orderBy('id').execute();
    expect(rows.map((row) => [row.id, Number(row.finalized)])).toEqual([
      ['batch_done', 1],
      ['batch_stuck', 0],
    ]);
  });
});
