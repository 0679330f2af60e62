/**
 * A worker round survives what goes wrong with one batch, on SQLite and PostgreSQL (issue 15 review):
 * a batch whose output file cannot be written does not stop the others (a batch created after it still
 * runs and finalizes); after MAX_FINALIZATION_ATTEMPTS failed attempts (a lease period apart) it ends
 * `failed` with `errors` saying why and no file left; an output of many chunks is streamed into the
 * `database` store and the batch completes; readiness fails while rounds keep failing, and
 * stays up through a long finalization that makes progress.
 */
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { BatchFiles } from '../../src/batch/batch-files.ts';
import { MAX_FINALIZATION_ATTEMPTS } from '../../src/batch/batch-lifecycle.ts';
import { FAILED_ROUNDS_UNREADY } from '../../src/batch/batch-worker.ts';
import { createDatabase } from '../../src/store/db/create-database.ts';
import { availableBackends } from '../support/available-backends.ts';
import { batchWorkerHarness, eventually } from '../support/batch-worker-harness.ts';

const LEASE_MS = 60_000;

describe.each(await availableBackends())('batch worker faults on %s', (_name, makeBackend) => {
  const h = batchWorkerHarness(makeBackend);

  /** The harness's file store, except that writing a file of `batchId` throws. */
  const failingFor = (batchId: string) => ({
    writeOutput: (...args: Parameters<BatchFiles['writeOutput']>) =>
      args[1].startsWith(batchId)
        ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }))
        : h.files.writeOutput(...args),
    discardBytes: (id: string) => h.files.discardBytes(id),
  });

  const fileRows = async (batchId: string) =>
    (
      await h.db.db.selectFrom('batch_files').select('id').where('filename', 'like', `${batchId}%`).execute()
    ).map((row) => row.id);

  it('a batch whose finalization fails does not stop a later batch from running and finalizing', async () => {
    await h.createBatch('stuck_a', ['a']);
    h.clock.advance(1_000);
    await h.createBatch('later_b', ['b']);
    const run = h.worker({ files: failingFor('stuck_a'), leaseMs: LEASE_MS });
    await expect(run.tick()).rejects.toThrow('ENOSPC');
    expect(await h.batches.get('later_b')).toMatchObject({ status: 'completed', completed: 1 });
    expect(await h.batches.get('stuck_a')).toMatchObject({ status: 'finalizing', finalized: 0 });
  });

  it(`fails the batch with errors after ${MAX_FINALIZATION_ATTEMPTS} failed finalizations, leaving no file`, async () => {
    await h.createBatch('poisoned', ['a', 'b']);
    const finalized: string[] = [];
    const run = h.worker({
      files: failingFor('poisoned'),
      leaseMs: LEASE_MS,
      onFinalized: (batch) => finalized.push(batch.status),
    });
    for (let attempt = 1; attempt < MAX_FINALIZATION_ATTEMPTS; attempt++) {
      await expect(run.tick()).rejects.toThrow('ENOSPC');
      expect((await h.batches.get('poisoned'))?.status).toBe('finalizing');
      // The failed attempt keeps its lease: no retry before it expires.
      await run.tick();
      h.clock.advance(LEASE_MS);
    }
    await expect(run.tick()).rejects.toThrow('ENOSPC');
    const batch = await h.batches.get('poisoned');
    expect(batch).toMatchObject({
      status: 'failed',
      finalized: 1,
      completed: 2,
      output_file_id: null,
      error_file_id: null,
    });
    expect(batch?.failed_at).not.toBeNull();
    expect(JSON.parse(batch!.errors!)).toEqual([
      {
        code: 'finalization_failed',
        message: expect.stringContaining('ENOSPC: no space left on device'),
        param: null,
        line: null,
      },
    ]);
    expect(finalized.filter((status) => status === 'failed')).toEqual(['failed']);
    expect(await fileRows('poisoned')).toEqual([]);
    await run.tick(); // a failed batch is finished: nothing more happens to it
  });

  it('writes an output of many chunks as a stream and completes the batch (no output is too large to build)', async () => {
    // Before issue 25 the database store built an output in memory and failed a batch past a bound.
    const chunked = new BatchFiles({
      db: h.db.db,
      store: 'database',
      clock: h.clock,
      limits: { maxLines: 10, maxLineBytes: 10_000, lineSetting: 'batch_line_max_bytes' },
      chunks: { chunkBytes: 64, readChunks: 2 },
    });
    const contents = ['x'.repeat(300), 'é€😀'.repeat(40)];
    await h.createBatch('many_chunks', contents);
    await h.worker({ files: chunked }).tick();
    const batch = await h.batches.get('many_chunks');
    expect(batch).toMatchObject({ status: 'completed', completed: 2, errors: null });
    const file = await chunked.get(batch!.output_file_id!, { all: true });
    const chunks = await h.db.db
      .selectFrom('batch_file_chunks')
      .select('data')
      .where('file_id', '=', file!.id)
      .execute();
    const sizes = chunks.map((chunk) => Buffer.byteLength(chunk.data));
    expect(sizes.length).toBeGreaterThanOrEqual(Math.ceil(file!.bytes / 64));
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(file!.bytes);
    const lines = (await text(chunked.content(file!)))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.response.body.echo)).toEqual(contents);
    expect(file!.line_count).toBe(2);
  });

  it('readiness fails while rounds keep failing, and only completed rounds count as beats', async () => {
    // A worker on a database without its tables: every round fails from its first query.
    const backend = makeBackend();
    const broken = await createDatabase({
      url: backend.databaseUrl,
      poolSize: 2,
      ...(backend.schema ? { schema: backend.schema } : {}),
    });
    const failing = h.worker({ db: broken.db, workerId: 'w-broken' });
    const healthy = h.worker({ workerId: 'w-ok' });
    // One round at start (the next only after a minute), then whole rounds by hand.
    failing.start(60_000);
    healthy.start(60_000);
    const alive = (worker: typeof failing) => {
      try {
        worker.checkAlive();
        return true;
      } catch (error) {
        return (error as Error).message;
      }
    };
    try {
      await eventually('the healthy worker is ready', () => alive(healthy) === true);
      for (let round = 1; round <= FAILED_ROUNDS_UNREADY; round++)
        await expect(failing.tick()).rejects.toThrow();
      // The start's own round may have failed too (it runs beside these).
      expect(alive(failing)).toMatch(/the batch worker's last \d+ rounds failed: .*batch/);
    } finally {
      await failing.stop();
      await healthy.stop();
      await broken.close();
      await backend.cleanup();
    }
  });

  it('a long finalization that makes progress keeps readiness up', async () => {
    await h.createBatch('long_final', ['l1', 'l2', 'l3', 'l4']);
    const seen: Array<true | string> = [];
    let run: ReturnType<typeof h.worker> | undefined;
    // Each output line takes a whole lease period of (manual) time to write.
    const slowFiles = {
      writeOutput: async (...args: Parameters<BatchFiles['writeOutput']>) => {
        const [owner, filename, lines, id] = args;
        const written: string[] = [];
        for await (const line of lines) {
          written.push(line);
          if (!filename.startsWith('long_final')) continue;
          h.clock.advance(LEASE_MS);
          try {
            run!.checkAlive();
            seen.push(true);
          } catch (error) {
            seen.push((error as Error).message);
          }
        }
        return h.files.writeOutput(
          owner,
          filename,
          (async function* () {
            yield* written;
          })(),
          id,
        );
      },
      discardBytes: (id: string) => h.files.discardBytes(id),
    };
    run = h.worker({ files: slowFiles, leaseMs: LEASE_MS, workerId: 'w-long' });
    run.start(5);
    try {
      await eventually(
        'the batch completed',
        async () => (await h.batches.get('long_final'))?.status === 'completed',
      );
    } finally {
      await run.stop();
    }
    expect(seen).toEqual([true, true, true, true]);
  });
});
