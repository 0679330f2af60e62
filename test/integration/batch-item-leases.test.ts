/**
 * The batch worker's leases (issue 15) on SQLite and PostgreSQL: claims take due items once each with a
 * new fencing token, concurrent claims never share an item, an expired lease is claimed again and the
 * old lease's late result is discarded, a 429 delay gives back its attempt, and closing a cancelled
 * batch leaves live leases alone unless told otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/db/create-database.ts';
import { BatchItemLeaseRepository } from '../../src/store/db/repositories/batch-item-lease-repository.ts';
import { BatchRepository } from '../../src/store/db/repositories/batch-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import { type Backend, openBackendDatabase } from '../support/backends.ts';

describe.each(await availableBackends())('batch item leases on %s', (_name, makeBackend) => {
  let backend: Backend;
  let database: Database;
  let leases: BatchItemLeaseRepository;
  let batches: BatchRepository;

  beforeAll(async () => {
    backend = makeBackend();
    database = await openBackendDatabase(backend);
    leases = new BatchItemLeaseRepository(database.db, database.dialect);
    batches = new BatchRepository(database.db);
  });
  afterAll(async () => {
    await database?.close();
    await backend?.cleanup();
  });

  const createBatch = async (id: string, lines: number, status = 'in_progress') => {
    await batches.create(
      {
        id,
        owner_key_id: 'key-1',
        owner_team_id: null,
        endpoint: '/v1/embeddings',
        input_file_id: 'file-1',
        completion_window: '24h',
        status,
        output_file_id: null,
        error_file_id: null,
        errors: null,
        metadata: null,
        total: lines,
        completed: 0,
        failed: 0,
        created_at: 1,
        in_progress_at: 1,
        expires_at: 86_401,
        finalizing_at: null,
        completed_at: null,
        failed_at: null,
        expired_at: null,
        cancelling_at: null,
        cancelled_at: null,
        finalized: 0,
      },
      Array.from({ length: lines }, (_, index) => ({
        line_index: index,
        custom_id: `c${index}`,
        body: '{"model":"m","input":"x"}',
      })),
    );
  };

  it('claims each due item once, in line order, with a token, and counts results in the batch', async () => {
    await createBatch('batch_claims', 5);
    expect(await leases.readyBatches(1_000)).toContainEqual(
      expect.objectContaining({ batchId: 'batch_claims', ready: 5, ownerKeyId: 'key-1' }),
    );
    const first = await leases.claim('batch_claims', 3, 'w1', 1_000, 60_000);
    expect(first.map((item) => [item.lineIndex, item.token, item.attempts])).toEqual([
      [0, 1, 1],
      [1, 1, 1],
      [2, 1, 1],
    ]);
    const second = await leases.claim('batch_claims', 3, 'w2', 1_000, 60_000);
    expect(second.map((item) => item.lineIndex)).toEqual([3, 4]);
    expect(await leases.claim('batch_claims', 3, 'w3', 1_000, 60_000)).toEqual([]);
    const ok = { outcome: 'succeeded' as const, response: '{"status_code":200}', error: null };
    expect(await leases.complete({ batchId: 'batch_claims', lineIndex: 0, token: 1 }, ok)).toBe(true);
    expect(await leases.complete({ batchId: 'batch_claims', lineIndex: 0, token: 1 }, ok)).toBe(false);
    const failed = { outcome: 'failed' as const, response: '{"status_code":400}', error: null };
    expect(await leases.complete({ batchId: 'batch_claims', lineIndex: 1, token: 1 }, failed)).toBe(true);
    const batch = await batches.get('batch_claims');
    expect([batch?.completed, batch?.failed]).toEqual([1, 1]);
    expect(await leases.unfinished('batch_claims')).toBe(3);
  });

  it('never gives one item to two concurrent claims', async () => {
    await createBatch('batch_race', 40);
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, worker) => leases.claim('batch_race', 5, `w${worker}`, 1_000, 60_000)),
    );
    const taken = claims.flat().map((item) => item.lineIndex);
    expect(new Set(taken).size).toBe(taken.length);
    expect(taken.length).toBeLessThanOrEqual(40);
  });

  it('reclaims an expired lease with a new token and discards the old lease’s late result', async () => {
    await createBatch('batch_reclaim', 1);
    const [old] = await leases.claim('batch_reclaim', 1, 'dead', 1_000, 10_000);
    expect(await leases.claim('batch_reclaim', 1, 'w2', 5_000, 10_000)).toEqual([]);
    expect(await leases.expiredLeases(11_000)).toBeGreaterThanOrEqual(1);
    const [taken] = await leases.claim('batch_reclaim', 1, 'w2', 11_000, 10_000);
    expect(taken?.token).toBe(old!.token + 1);
    expect(taken?.attempts).toBe(2);
    const late = { outcome: 'succeeded' as const, response: '{"status_code":200}', error: null };
    expect(await leases.complete({ batchId: 'batch_reclaim', lineIndex: 0, token: old!.token }, late)).toBe(
      false,
    );
    expect(await leases.complete({ batchId: 'batch_reclaim', lineIndex: 0, token: taken!.token }, late)).toBe(
      true,
    );
    expect((await batches.get('batch_reclaim'))?.completed).toBe(1);
  });

  it('delays an item until not_before, giving back the attempt of a 429', async () => {
    await createBatch('batch_delay', 1);
    const [item] = await leases.claim('batch_delay', 1, 'w', 1_000, 60_000);
    expect(
      await leases.release({ batchId: 'batch_delay', lineIndex: 0, token: item!.token }, 9_000, false),
    ).toBe(true);
    expect(await leases.claim('batch_delay', 1, 'w', 8_999, 60_000)).toEqual([]);
    const [again] = await leases.claim('batch_delay', 1, 'w', 9_000, 60_000);
    expect(again?.attempts).toBe(1);
  });

  it('closes unrun items of a cancelled batch; a live lease finishes unless taken too', async () => {
    await createBatch('batch_cancel', 3);
    const [live] = await leases.claim('batch_cancel', 1, 'w', 1_000, 60_000);
    expect(await leases.closeUnrun('batch_cancel', 'cancelled', '{"code":"batch_cancelled"}', 1_000)).toBe(2);
    expect(await leases.unfinished('batch_cancel')).toBe(1);
    expect(await leases.closeUnrun('batch_cancel', 'cancelled', '{}', 1_000, true)).toBe(1);
    const late = { outcome: 'succeeded' as const, response: '{}', error: null };
    expect(await leases.complete({ batchId: 'batch_cancel', lineIndex: 0, token: live!.token }, late)).toBe(
      false,
    );
    expect(await leases.unfinished('batch_cancel')).toBe(0);
  });

  it('does not offer items of batches that no longer run', async () => {
    await createBatch('batch_done', 2, 'cancelling');
    const ready = await leases.readyBatches(1_000);
    expect(ready.map((batch) => batch.batchId)).not.toContain('batch_done');
  });
});
