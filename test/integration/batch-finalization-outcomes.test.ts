/**
 * What finalization makes of a batch whose items are done (issue 15 review), on SQLite and PostgreSQL:
 * - a batch whose every request failed is `completed` (OpenAI: `failed` is for the batch itself; the
 *   failed requests are lines of its error file);
 * - a cancel that lands while the finalizer works ends the batch `cancelled`, never `completed` or
 *   `expired` with `cancelling_at` set;
 * - once attached, the items' copies of the input bodies and the answers are cleared (the files hold
 *   them), the counts stay on the batch.
 */
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchFiles } from '../../src/batch/batch-files.ts';
import { finalizeBatch } from '../../src/batch/batch-finalizer.ts';
import type { Database } from '../../src/store/db/create-database.ts';
import { BatchRepository } from '../../src/store/db/repositories/batch-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import { type Backend, openBackendDatabase } from '../support/backends.ts';
import { chatBatchRow, chatItemRows } from '../support/batch-rows.ts';
import { ManualClock } from '../support/manual-clock.ts';

const LEASE_MS = 60_000;

type Outcome = { status: 'succeeded' | 'failed'; code: number };

describe.each(await availableBackends())('batch finalization outcomes on %s', (_name, makeBackend) => {
  let backend: Backend;
  let database: Database;
  let batches: BatchRepository;
  let files: BatchFiles;
  /** A second connection: the "cancel route" of another replica, outside the finalizer's queries. */
  let other: Database;
  const clock = new ManualClock();

  beforeAll(async () => {
    backend = makeBackend();
    database = await openBackendDatabase(backend);
    batches = new BatchRepository(database.db);
    other = await openBackendDatabase(backend, { poolSize: 1, migrate: false });
    files = new BatchFiles({
      db: database.db,
      store: 'database',
      clock,
      limits: { maxLines: 50_000, maxLineBytes: 1_000_000, lineSetting: 'batch_line_max_bytes' },
    });
  });
  afterAll(async () => {
    await other?.close();
    await database?.close();
    await backend?.cleanup();
  });

  /** A running batch whose items already have these outcomes (nothing left to run). */
  const doneBatch = async (id: string, outcomes: Outcome[]) => {
    const now = Math.floor(clock.now() / 1000);
    await batches.create(
      chatBatchRow(id, now, outcomes.length, {
        completed: outcomes.filter((outcome) => outcome.status === 'succeeded').length,
        failed: outcomes.filter((outcome) => outcome.status === 'failed').length,
        in_progress_at: now,
      }),
      chatItemRows(outcomes.map((_outcome, index) => `secret ${index}`)),
    );
    for (const [index, outcome] of outcomes.entries())
      await database.db
        .updateTable('batch_items')
        .set({
          status: outcome.status,
          attempts: 1,
          response: JSON.stringify({
            status_code: outcome.code,
            request_id: `r${index}`,
            body: outcome.code === 200 ? { answer: `reply ${index}` } : { error: { message: 'no' } },
          }),
        })
        .where('batch_id', '=', id)
        .where('line_index', '=', index)
        .execute();
  };

  const finalize = (
    id: string,
    expired = false,
    db = database.db,
    workerFiles: Pick<BatchFiles, 'writeOutput' | 'discardBytes'> = files,
  ) => finalizeBatch({ db, files: workerFiles, clock, owner: 'w1', leaseMs: LEASE_MS }, id, expired);

  const lines = async (fileId: string | null | undefined) => {
    const file = fileId ? await files.get(fileId, { all: true }) : undefined;
    if (!file) return [];
    let text = '';
    for await (const chunk of await files.content(file)) text += Buffer.from(chunk).toString('utf8');
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { custom_id: string; response: { status_code: number } });
  };

  it('a batch whose every request failed is completed, with the failures in its error file', async () => {
    await doneBatch('batch_allfail', [
      { status: 'failed', code: 400 },
      { status: 'failed', code: 500 },
    ]);
    const finalized = await finalize('batch_allfail');
    expect(finalized?.status).toBe('completed');
    const batch = await batches.get('batch_allfail');
    expect(batch).toMatchObject({ status: 'completed', failed_at: null, output_file_id: null });
    expect(batch?.completed_at).not.toBeNull();
    expect((await lines(batch?.error_file_id)).map((line) => line.response.status_code)).toEqual([400, 500]);
  });

  /** The cancel route's transition, through the other connection. */
  const cancel = (id: string) =>
    new BatchRepository(other.db).update(
      id,
      { status: 'cancelling', cancelling_at: Math.floor(clock.now() / 1000) },
      ['validating', 'in_progress'],
    );

  it('a cancel between the finalizer read and its lease claim ends the batch cancelled', async () => {
    await doneBatch('batch_race', [
      { status: 'succeeded', code: 200 },
      { status: 'failed', code: 400 },
    ]);
    const finalized = await finalize(
      'batch_race',
      false,
      database.db.withPlugin(afterFirstBatchRead(() => cancel('batch_race'))),
    );
    const batch = await batches.get('batch_race');
    expect(finalized?.status).toBe('cancelled');
    expect(batch).toMatchObject({ status: 'cancelled', completed_at: null, finalized: 1 });
    expect(batch?.cancelling_at).not.toBeNull();
    expect(batch?.cancelled_at).not.toBeNull();
    // It ran to the end: its answer and its refusal are in the files.
    expect((await lines(batch?.output_file_id)).map((line) => line.custom_id)).toEqual(['c0']);
    expect((await lines(batch?.error_file_id)).map((line) => line.custom_id)).toEqual(['c1']);
  });

  it('a cancel while the files of an expired batch are written ends it cancelled, not expired', async () => {
    await doneBatch('batch_late', [{ status: 'succeeded', code: 200 }]);
    const cancelling = {
      writeOutput: async (...args: Parameters<BatchFiles['writeOutput']>) => {
        expect(await cancel('batch_late')).toBe(true);
        return files.writeOutput(...args);
      },
      discardBytes: (id: string) => files.discardBytes(id),
    };
    expect((await finalize('batch_late', true, database.db, cancelling))?.status).toBe('cancelled');
    expect(await batches.get('batch_late')).toMatchObject({ status: 'cancelled', expired_at: null });
  });

  it('a cancel after the batch turned finalizing changes nothing: it completes', async () => {
    await doneBatch('batch_after', [{ status: 'succeeded', code: 200 }]);
    const refused: boolean[] = [];
    const cancelling = {
      writeOutput: async (...args: Parameters<BatchFiles['writeOutput']>) => {
        refused.push(!(await cancel('batch_after')));
        return files.writeOutput(...args);
      },
      discardBytes: (id: string) => files.discardBytes(id),
    };
    expect((await finalize('batch_after', false, database.db, cancelling))?.status).toBe('completed');
    expect(refused).toEqual([true]);
    expect(await batches.get('batch_after')).toMatchObject({ status: 'completed', cancelling_at: null });
  });

  it('clears the item bodies and answers once the files are attached; the counts stay', async () => {
    await doneBatch('batch_clear', [
      { status: 'succeeded', code: 200 },
      { status: 'failed', code: 400 },
    ]);
    const running = await database.db
      .selectFrom('batch_items')
      .select(['body', 'response'])
      .where('batch_id', '=', 'batch_clear')
      .execute();
    expect(running.every((item) => item.body.includes('secret') && item.response !== null)).toBe(true);
    await finalize('batch_clear');
    const items = await database.db
      .selectFrom('batch_items')
      .select(['custom_id', 'body', 'response', 'status'])
      .where('batch_id', '=', 'batch_clear')
      .orderBy('line_index')
      .execute();
    expect(items).toEqual([
      { custom_id: 'c0', body: '', response: null, status: 'succeeded' },
      { custom_id: 'c1', body: '', response: null, status: 'failed' },
    ]);
    const batch = await batches.get('batch_clear');
    expect(batch).toMatchObject({ status: 'completed', total: 2, completed: 1, failed: 1 });
    expect(await lines(batch?.output_file_id)).toMatchObject([
      { custom_id: 'c0', response: { body: { answer: 'reply 0' } } },
    ]);
  });
});

/** Runs `act` once, after the first read of `batches` returned (before the finalizer's next query). */
function afterFirstBatchRead(act: () => Promise<unknown>): KyselyPlugin {
  const reads = new Set<QueryId>();
  let done = false;
  return {
    transformQuery({ node, queryId }: PluginTransformQueryArgs) {
      if (node.kind === 'SelectQueryNode' && JSON.stringify(node.from).includes('"name":"batches"'))
        reads.add(queryId);
      return node;
    },
    async transformResult({ result, queryId }: PluginTransformResultArgs) {
      if (!done && reads.has(queryId)) {
        done = true;
        await act();
      }
      return result;
    },
  };
}
