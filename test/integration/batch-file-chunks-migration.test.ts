/**
 * Migration 0014 on SQLite and PostgreSQL (issue 25): files stored the old way (the whole text in the
 * `batch_files` row) are copied into chunks, byte for byte, multi-byte characters included; the row's
 * text stays for replicas of the previous build during a rolling upgrade; a file an older replica writes
 * after the migration is still read; the input of a batch running across the upgrade stays readable and
 * can still feed a new batch; the migration runs again without harm (SQLite runs it outside a
 * transaction).
 */
import { buffer } from 'node:stream/consumers';
import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchFiles } from '../../src/batch/batch-files.ts';
import { createBatch } from '../../src/batch/create-batch.ts';
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
import * as m11 from '../../src/store/db/migrations/0014-batch-file-chunks.ts';
import { BatchRepository } from '../../src/store/db/repositories/batch-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { chatBatchRow } from '../support/batch-rows.ts';
import { ManualClock } from '../support/manual-clock.ts';

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
  '0010-batch-finalization-leases': m10,
};

/** An input file of `count` embedding requests whose inputs hold two-, three- and four-byte characters. */
const inputText = (count: number, prefix: string) =>
  Array.from(
    { length: count },
    (_, index) =>
      `${JSON.stringify({ custom_id: `${prefix}${index}`, method: 'POST', url: '/v1/embeddings', body: { model: 'demo', input: `é€😀 ${'ü'.repeat(150)} ${index}` } })}\n`,
  ).join('');

describe.each(await availableBackends())('migration 0014 on %s', (_name, makeBackend) => {
  let backend: Backend;
  let database: Database;
  const clock = new ManualClock();
  const owner = { keyId: 'key-old', teamId: null };
  // Several of the migration's chunks (16 Ki UTF-16 units each).
  const bigText = inputText(2_000, 'old');

  beforeAll(async () => {
    backend = makeBackend();
    database = await createDatabase({
      url: backend.databaseUrl,
      poolSize: 2,
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

  /** A row as the build before 0014 wrote it: the whole text in `content`. */
  const insertOldWay = (id: string, content: string | null, extra: Record<string, unknown> = {}) =>
    database.db
      .insertInto('batch_files')
      .values({
        id,
        owner_key_id: owner.keyId,
        owner_team_id: null,
        purpose: 'batch',
        filename: `${id}.jsonl`,
        bytes: content === null ? 0 : Buffer.byteLength(content),
        line_count: 0,
        created_at: 100,
        storage: 'database',
        content,
        deleted_at: null,
        ...extra,
      })
      .execute();

  const files = () =>
    new BatchFiles({
      db: database.db,
      store: 'database',
      clock,
      limits: {
        maxLines: 50_000,
        maxLineBytes: 1_000_000,
        lineSetting: 'general_settings.max_request_body_bytes',
      },
    });
  const chunkCount = async (id: string) =>
    Number(
      (
        await database.db
          .selectFrom('batch_file_chunks')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('file_id', '=', id)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('copies files stored the old way into chunks, byte for byte, and keeps them readable across the upgrade', async () => {
    expect((await migrator(before).migrateToLatest()).error).toBeUndefined();
    await insertOldWay('file-old-running', bigText);
    await insertOldWay('file-old-deleted', null, { deleted_at: 150 });
    await insertOldWay('file-old-directory', null, { storage: 'directory', bytes: 10 });
    // A batch running across the upgrade reads its input file.
    await new BatchRepository(database.db).create(
      {
        ...chatBatchRow('batch_across', 100, 0, { status: 'in_progress' }),
        input_file_id: 'file-old-running',
      },
      [],
    );

    expect(
      (await migrator({ ...before, '0014-batch-file-chunks': m11 }).migrateToLatest()).error,
    ).toBeUndefined();

    const copied = await database.db
      .selectFrom('batch_file_chunks')
      .select('data')
      .where('file_id', '=', 'file-old-running')
      .orderBy('seq')
      .execute();
    expect(copied.length).toBeGreaterThan(3);
    expect(copied.map((chunk) => chunk.data).join('')).toBe(bigText);
    // No chunk ends between the halves of a character outside the BMP (each is valid text alone).
    expect(copied.every((chunk) => Buffer.from(chunk.data).toString() === chunk.data)).toBe(true);
    expect(await chunkCount('file-old-deleted')).toBe(0);
    expect(await chunkCount('file-old-directory')).toBe(0);
    const store = files();
    const file = await store.get('file-old-running', { all: true });
    expect((await buffer(store.content(file!))).equals(Buffer.from(bigText))).toBe(true);
    // Replicas of the previous build still read the row's own text until they are gone.
    const row = await database.db
      .selectFrom('batch_files')
      .select('content')
      .where('id', '=', 'file-old-running')
      .executeTakeFirstOrThrow();
    expect(row.content).toBe(bigText);
    // After the upgrade the running batch's input still feeds a new batch, read from its chunks.
    const again = await createBatch(
      { files: store, batches: new BatchRepository(database.db), clock },
      owner,
      { inputFileId: file!.id, endpoint: '/v1/embeddings', completionWindow: '24h', metadata: null },
      file!,
    );
    expect(again.total).toBe(2_000);
    // Deleting it clears both copies.
    expect(await store.delete(file!.id)).toBe(true);
    expect(await chunkCount(file!.id)).toBe(0);
    const gone = await database.db
      .selectFrom('batch_files')
      .select('content')
      .where('id', '=', file!.id)
      .executeTakeFirstOrThrow();
    expect(gone.content).toBeNull();
  });

  it('reads a file an older replica wrote into its row after the migration ran', async () => {
    const late = inputText(3, 'late');
    await insertOldWay('file-written-late', late);
    const store = files();
    const file = await store.get('file-written-late', { all: true });
    expect((await buffer(store.content(file!))).toString('utf8')).toBe(late);
  });

  it('runs again without harm (SQLite applies it outside a transaction, so a crash may repeat it)', async () => {
    await insertOldWay('file-old-second', inputText(5, 'second'));
    await m11.up(database.db as Kysely<unknown>);
    const chunksBefore = await chunkCount('file-old-second');
    await m11.up(database.db as Kysely<unknown>);
    expect(await chunkCount('file-old-second')).toBe(chunksBefore);
    expect(chunksBefore).toBe(1);
    const { rows } = await sql<{ n: number }>`select count(*) as n from batch_file_pending`.execute(
      database.db,
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });
});
