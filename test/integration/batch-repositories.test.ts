/**
 * The batch rows of migration 0009 on SQLite and PostgreSQL: a batch and its items are created together
 * (more items than one INSERT chunk), read back with numbers as numbers, listed newest first with a
 * cursor under the visibility rule (team, else key; master all), and updated with a status
 * compare-and-set; batch_files rows (their bytes in chunks) list and delete the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.ts';
import { createDatabase, type Database } from '../../src/store/db/create-database.ts';
import { migrateToLatest } from '../../src/store/db/migrate.ts';
import { BatchFileRepository } from '../../src/store/db/repositories/batch-file-repository.ts';
import { type BatchRecord, BatchRepository } from '../../src/store/db/repositories/batch-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';

function batch(id: string, createdAt: number, owner: { key: string; team: string | null }): BatchRecord {
  return {
    id,
    owner_key_id: owner.key,
    owner_team_id: owner.team,
    endpoint: '/v1/embeddings',
    input_file_id: 'file-x',
    completion_window: '24h',
    status: 'validating',
    output_file_id: null,
    error_file_id: null,
    errors: null,
    metadata: JSON.stringify({ k: 'v' }),
    total: 0,
    completed: 0,
    failed: 0,
    created_at: createdAt,
    in_progress_at: null,
    expires_at: createdAt + 86_400,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    finalized: 0,
  };
}

describe.each(await availableBackends())('batch repositories on %s', (_name, makeBackend) => {
  let backend: Backend;
  let database: Database;
  let batches: BatchRepository;
  let files: BatchFileRepository;

  beforeAll(async () => {
    backend = makeBackend();
    const config = parseConfig(`general_settings:\n${backend.generalSettingsYaml}`, {
      path: undefined,
      env: {},
      dataDir: '/nonexistent',
      source: 'test',
    });
    database = await createDatabase({
      url: config.general_settings.database_url,
      poolSize: 4,
      ...(backend.schema ? { schema: backend.schema } : {}),
    });
    await migrateToLatest(database);
    batches = new BatchRepository(database.db);
    files = new BatchFileRepository(database.db);
  });
  afterAll(async () => {
    await database?.close();
    await backend?.cleanup();
  });

  it('creates a batch with its items in one go, more than one insert chunk of them', async () => {
    const items = Array.from({ length: 1_201 }, (_, index) => ({
      line_index: index,
      custom_id: `c${index}`,
      body: JSON.stringify({ model: 'demo', input: `t${index}` }),
    }));
    await batches.create(
      { ...batch('batch_big', 1_000, { key: 'k1', team: null }), total: items.length },
      items,
    );
    expect(await batches.get('batch_big')).toMatchObject({
      total: 1_201,
      created_at: 1_000,
      expires_at: 87_400,
    });
    const page = await batches.listItems('batch_big', 1_199, 10);
    expect(page.map((item) => [item.line_index, item.custom_id, item.status, item.lease_token])).toEqual([
      [1_199, 'c1199', 'pending', 0],
      [1_200, 'c1200', 'pending', 0],
    ]);
  });

  it('creates nothing when an item is refused (same line twice)', async () => {
    const item = { line_index: 0, custom_id: 'a', body: '{}' };
    await expect(
      batches.create(batch('batch_dup', 1_000, { key: 'k1', team: null }), [item, item]),
    ).rejects.toThrow();
    expect(await batches.get('batch_dup')).toBeUndefined();
  });

  it('lists newest first under the visibility rule, with a cursor', async () => {
    await batches.create(batch('batch_t1', 2_000, { key: 'k2', team: 'team-a' }), []);
    await batches.create(batch('batch_t2', 2_001, { key: 'k3', team: 'team-a' }), []);
    await batches.create(batch('batch_solo', 2_002, { key: 'k4', team: null }), []);
    const ids = async (viewer: Parameters<BatchRepository['list']>[0], after?: string) =>
      (await batches.list(viewer, { limit: 1, after })).items.map((row) => row.id);
    const team = { keyId: 'k9', teamId: 'team-a' };
    expect(await ids(team)).toEqual(['batch_t2']);
    expect(await ids(team, 'batch_t2')).toEqual(['batch_t1']);
    expect((await batches.list(team, { limit: 1, after: 'batch_t1' })).hasMore).toBe(false);
    expect(await ids({ keyId: 'k4', teamId: null })).toEqual(['batch_solo']);
    expect(await ids({ keyId: 'k2', teamId: 'team-b' })).toEqual([]);
    expect(await ids({ all: true })).toEqual(['batch_solo']);
    expect(await batches.getVisible('batch_t1', { keyId: 'k4', teamId: null })).toBeUndefined();
    expect(await batches.getVisible('batch_t1', team)).toMatchObject({ id: 'batch_t1' });
  });

  it('updates with a status compare-and-set', async () => {
    expect(
      await batches.update('batch_t1', { status: 'in_progress', in_progress_at: 2_100 }, ['validating']),
    ).toBe(true);
    expect(await batches.update('batch_t1', { status: 'in_progress' }, ['validating'])).toBe(false);
    expect(await batches.get('batch_t1')).toMatchObject({ status: 'in_progress', in_progress_at: 2_100 });
    expect((await batches.listByStatus(['in_progress'], 10)).map((row) => row.id)).toEqual(['batch_t1']);
  });

  it('keeps batch_files rows: chunks, visibility, soft delete', async () => {
    const row = {
      id: 'file-1',
      owner_key_id: 'k1',
      owner_team_id: 'team-a',
      purpose: 'batch',
      filename: 'in.jsonl',
      bytes: 3,
      line_count: 1,
      created_at: 5,
      storage: 'database',
      deleted_at: null,
    };
    await files.chunks.begin('file-1', 1_000);
    await files.chunks.append('file-1', 0, ['{}\n']);
    await files.insertWritten(row);
    const text = async () => (await files.chunks.read('file-1', 0, 10)).map((chunk) => chunk.text).join('');
    expect(await text()).toBe('{}\n');
    expect(await files.getVisible('file-1', { keyId: 'k5', teamId: 'team-a' })).toEqual(row);
    expect(await files.getVisible('file-1', { keyId: 'k1', teamId: null })).toBeUndefined();
    expect(await files.markDeleted('file-1', 9)).toBe(true);
    expect(await files.markDeleted('file-1', 9)).toBe(false);
    await files.chunks.remove('file-1');
    expect(await text()).toBe('');
    expect(await files.get('file-1')).toMatchObject({ deleted_at: 9 });
    expect((await files.list({ all: true }, { limit: 10 })).items).toEqual([]);
  });
});
