/**
 * Finalization is recoverable (issue 15, migration 0010), on SQLite and PostgreSQL with the directory
 * file store: a worker that dies after winning a batch's finalization (having written part of its
 * files) leaves a lease that another worker takes over once it expires; the batch then ends with
 * exactly one output and one error file, and nothing the dead worker wrote is left behind (no row, no
 * bytes, no half-written file). A finalizer that loses its lease while writing discards its own files.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchFiles } from '../../src/batch/batch-files.ts';
import { finalizationFileIds } from '../../src/batch/batch-finalizer.ts';
import { BatchWorker } from '../../src/batch/batch-worker.ts';
import type { ItemPipelines } from '../../src/batch/item-runner.ts';
import type { Caller } from '../../src/canonical/caller.ts';
import { masterCaller } from '../../src/identity/authenticator.ts';
import { errors } from '../../src/lib/error-catalogue.ts';
import type { Database } from '../../src/store/db/create-database.ts';
import { BatchRepository } from '../../src/store/db/repositories/batch-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import { type Backend, openBackendDatabase } from '../support/backends.ts';
import { chatBatchRow, chatItemRows } from '../support/batch-rows.ts';
import { ManualClock } from '../support/manual-clock.ts';

const owner: Caller = { ...masterCaller, kind: 'api_key', keyId: 'key-1' };
const LEASE_MS = 60_000;

/** Chat answers `{"echo": …}`; the content `bad` is refused with a 400 (an error-file line). */
const pipelines: ItemPipelines = {
  modalities: { embed: () => Promise.reject(new Error('not used')) },
  text: {
    run: async (request) => {
      const content = String(request.messages[0]?.content);
      if (content === 'bad') throw errors.invalidRequest('no good', 'messages');
      return {
        kind: 'json',
        response: {} as never,
        json: JSON.stringify({ echo: content }),
        deploymentId: 'd',
        attempts: 1,
        headers: {},
      };
    },
  },
};

describe.each(await availableBackends())('batch finalization lease on %s', (_name, makeBackend) => {
  let backend: Backend;
  let database: Database;
  let batches: BatchRepository;
  let files: BatchFiles;
  let folder: string;
  const clock = new ManualClock();

  beforeAll(async () => {
    backend = makeBackend();
    database = await openBackendDatabase(backend);
    batches = new BatchRepository(database.db);
    folder = mkdtempSync(join(tmpdir(), 'switchboard-finalize-'));
    files = new BatchFiles({
      db: database.db,
      store: folder,
      clock,
      limits: { maxLines: 50_000, maxLineBytes: 1_000_000, lineSetting: 'batch_line_max_bytes' },
    });
  });
  afterAll(async () => {
    await database?.close();
    await backend?.cleanup();
    rmSync(folder, { recursive: true, force: true });
  });

  type WorkerFiles = Pick<BatchFiles, 'writeOutput' | 'discardBytes'>;
  const worker = (workerId: string, workerFiles: WorkerFiles = files) =>
    new BatchWorker({
      db: database.db,
      dialect: database.dialect,
      files: workerFiles,
      pipelines,
      callerOfKey: async () => owner,
      clock,
      workerId,
      leaseMs: LEASE_MS,
    });

  const createBatch = async (id: string, contents: string[]) => {
    const now = Math.floor(clock.now() / 1000);
    await batches.create(
      chatBatchRow(id, now, contents.length, { in_progress_at: now }),
      chatItemRows(contents),
    );
  };

  /** File rows of the batch's output/error files, and the directory entries named after the batch. */
  const leftovers = async (batchId: string) => {
    const rows = await database.db
      .selectFrom('batch_files')
      .select('id')
      .where('filename', 'like', `${batchId}%`)
      .orderBy('id')
      .execute();
    return {
      rows: rows.map((row) => row.id),
      onDisk: readdirSync(folder)
        .filter((name) => name.includes(batchId))
        .sort(),
    };
  };

  it('a second worker finishes a batch whose finalizer died after writing its output file', async () => {
    await createBatch('batch_dies', ['a', 'bad', 'c']);
    const first = finalizationFileIds('batch_dies', 1);
    // Writes the output file, then "dies" while writing the error file: its half-written bytes stay.
    const dying = {
      writeOutput: async (...args: Parameters<BatchFiles['writeOutput']>) => {
        if (args[3] === first.error) {
          writeFileSync(join(folder, `${first.error}.partial`), '{"custom_id":');
          throw new Error('the process died here');
        }
        return files.writeOutput(...args);
      },
      discardBytes: (id: string) => files.discardBytes(id),
    };
    await expect(worker('w1', dying).tick()).rejects.toThrow('the process died here');
    expect(await batches.get('batch_dies')).toMatchObject({
      status: 'finalizing',
      finalized: 0,
      output_file_id: null,
    });
    expect((await leftovers('batch_dies')).rows).toEqual([first.output]);

    const second = worker('w2');
    await second.tick();
    expect((await batches.get('batch_dies'))?.status).toBe('finalizing'); // the dead worker's lease is live
    clock.advance(LEASE_MS);
    await second.tick();
    const batch = await batches.get('batch_dies');
    const taken = finalizationFileIds('batch_dies', 2);
    expect(batch).toMatchObject({
      status: 'completed',
      finalized: 1,
      completed: 2,
      failed: 1,
      output_file_id: taken.output,
      error_file_id: taken.error,
    });
    expect(await leftovers('batch_dies')).toEqual({
      rows: [taken.error, taken.output],
      onDisk: [taken.error, taken.output],
    });
    const output = (await files.get(taken.output, { all: true }))!;
    expect(output.line_count).toBe(2);
    // Attached: no later worker claims the finalization again.
    clock.advance(LEASE_MS);
    await worker('w3').tick();
    expect((await batches.get('batch_dies'))?.output_file_id).toBe(taken.output);
  });

  it('a finalizer that loses its lease while writing discards its files and attaches nothing', async () => {
    await createBatch('batch_slow', ['a', 'bad']);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reached: () => void = () => {};
    const stalled = new Promise<void>((resolve) => {
      reached = resolve;
    });
    // The first finalizer stalls after its output file, past its lease.
    const slow = {
      writeOutput: async (...args: Parameters<BatchFiles['writeOutput']>) => {
        const file = await files.writeOutput(...args);
        if (args[3] === finalizationFileIds('batch_slow', 1).output) {
          reached();
          await held;
        }
        return file;
      },
      discardBytes: (id: string) => files.discardBytes(id),
    };
    const stale = worker('w1', slow).tick();
    await stalled;
    clock.advance(LEASE_MS);
    await worker('w2').tick();
    release();
    await stale;
    const taken = finalizationFileIds('batch_slow', 2);
    expect(await batches.get('batch_slow')).toMatchObject({
      status: 'completed',
      output_file_id: taken.output,
      error_file_id: taken.error,
    });
    expect(await leftovers('batch_slow')).toEqual({
      rows: [taken.error, taken.output],
      onDisk: [taken.error, taken.output],
    });
  });
});
