/**
 * The lifecycle half of a worker round: every unfinished batch (paged by a keyset cursor, so none is
 * left out however many there are) moves validating → in_progress, closes its unrun items when past its
 * window or cancelling, and finalizes once nothing is left to run. Each batch is handled on its own: an
 * error on one (a failing file store, a database hiccup) is collected and the round goes on to the
 * others. A batch whose finalization fails MAX_FINALIZATION_ATTEMPTS times on this worker ends `failed`
 * with `errors` saying why, instead of being retried forever.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.ts';
import { BatchFinalizationRepository } from '../store/db/repositories/batch-finalization-repository.ts';
import type { BatchItemLeaseRepository } from '../store/db/repositories/batch-item-lease-repository.ts';
import type { BatchRepository } from '../store/db/repositories/batch-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { BatchFiles } from './batch-files.ts';
import { type FinalizedBatch, finalizationFileIds, finalizeBatch } from './batch-finalizer.ts';
import { NOT_RUN } from './batch-lines.ts';
import { type BatchErrorEntry, runsItems } from './batch-object.ts';

/** Failed finalizations (one per lease period: a failed attempt keeps its lease) before the batch fails. */
export const MAX_FINALIZATION_ATTEMPTS = 3;

/** Batches read per page of a round's scan. */
const PAGE = 100;

const UNFINISHED = ['validating', 'in_progress', 'cancelling', 'finalizing'];

export interface LifecycleOptions {
  db: Kysely<DatabaseSchema>;
  files: Pick<BatchFiles, 'writeOutput' | 'discardBytes'>;
  clock: Clock;
  workerId: string;
  leaseMs: number;
  leases: BatchItemLeaseRepository;
  batches: BatchRepository;
  onClosed(outcome: 'expired' | 'cancelled', count: number): void;
  onFinalized?: ((batch: FinalizedBatch) => void) | undefined;
  /** Called per line a finalization writes: a long finalization is progress (readiness). */
  onProgress(): void;
}

interface ScannedBatch {
  id: string;
  status: string;
  ownerKeyId: string;
  createdAt: number;
  expiresAt: number | null;
}

export class BatchLifecycle {
  private readonly options: LifecycleOptions;
  /** Failed finalization attempts per batch, on this worker. */
  private readonly failures = new Map<string, number>();

  constructor(options: LifecycleOptions) {
    this.options = options;
  }

  /** One pass over every unfinished batch; returns the errors met (each on one batch, or the scan's). */
  async advance(): Promise<unknown[]> {
    const errors: unknown[] = [];
    let after: ScannedBatch | undefined;
    for (;;) {
      const page = await this.page(after);
      for (const batch of page) {
        try {
          await this.advanceOne(batch);
        } catch (error) {
          errors.push(error);
        }
      }
      if (page.length < PAGE) return errors;
      after = page[page.length - 1];
    }
  }

  /** Unfinished batches after the cursor, oldest first (created_at, then id). */
  private async page(after: ScannedBatch | undefined): Promise<ScannedBatch[]> {
    let query = this.options.db
      .selectFrom('batches')
      .select(['id', 'status', 'owner_key_id', 'created_at', 'expires_at'])
      .where('status', 'in', UNFINISHED)
      .where('finalized', '=', 0);
    if (after)
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '>', after.createdAt),
          eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)]),
        ]),
      );
    const rows = await query.orderBy('created_at').orderBy('id').limit(PAGE).execute();
    return rows.map((row) => ({
      id: row.id,
      status: row.status,
      ownerKeyId: row.owner_key_id,
      createdAt: Number(row.created_at),
      expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    }));
  }

  private async advanceOne(batch: ScannedBatch): Promise<void> {
    const { batches, leases, clock } = this.options;
    const now = clock.now();
    const seconds = Math.floor(now / 1000);
    if (batch.status === 'validating')
      await batches.update(batch.id, { status: 'in_progress', in_progress_at: seconds }, ['validating']);
    // A batch already finalizing decided its status before; only a running one can still expire.
    const expired = runsItems(batch.status) && batch.expiresAt !== null && batch.expiresAt <= seconds;
    if (expired)
      this.options.onClosed(
        'expired',
        await leases.closeUnrun(batch.id, 'expired', JSON.stringify(NOT_RUN.expired), now, true),
      );
    if (batch.status === 'cancelling')
      this.options.onClosed(
        'cancelled',
        await leases.closeUnrun(batch.id, 'cancelled', JSON.stringify(NOT_RUN.cancelled), now),
      );
    if ((await leases.unfinished(batch.id)) > 0) return;
    let finalized: FinalizedBatch | undefined;
    try {
      finalized = await finalizeBatch(
        {
          db: this.options.db,
          files: this.progressReporting(),
          clock,
          owner: this.options.workerId,
          leaseMs: this.options.leaseMs,
        },
        batch.id,
        expired,
      );
    } catch (error) {
      await this.finalizationFailed(batch, error);
      throw error;
    }
    if (!finalized) return; // another worker's (or our failed attempt's) lease is live
    this.failures.delete(batch.id);
    this.options.onFinalized?.(finalized);
  }

  /** The file store, reporting each line a finalization writes (a beat for readiness). */
  private progressReporting(): LifecycleOptions['files'] {
    const { files, onProgress } = this.options;
    return {
      discardBytes: (id) => files.discardBytes(id),
      writeOutput: (owner, filename, lines, id) => {
        async function* beating(): AsyncGenerator<string> {
          for await (const line of lines) {
            onProgress();
            yield line;
          }
        }
        return files.writeOutput(owner, filename, beating(), id);
      },
    };
  }

  /**
   * Counts a failed finalization; the last allowed attempt fails the batch. The failed attempt still
   * holds its lease (so attempts are a lease period apart, and no other worker finalizes meanwhile): the
   * batch fails under that lease's token.
   */
  private async finalizationFailed(batch: ScannedBatch, error: unknown): Promise<void> {
    const attempts = (this.failures.get(batch.id) ?? 0) + 1;
    this.failures.set(batch.id, attempts);
    const message = error instanceof Error ? error.message : String(error);
    if (attempts >= MAX_FINALIZATION_ATTEMPTS)
      await this.fail(batch, {
        code: 'finalization_failed',
        message: `Writing the batch's output and error files failed ${attempts} times; the last error: ${message}`,
        param: null,
        line: null,
      });
  }

  private async fail(batch: ScannedBatch, entry: BatchErrorEntry): Promise<void> {
    const { db, files, clock, workerId } = this.options;
    const held = await db
      .selectFrom('batch_finalizations')
      .select('token')
      .where('batch_id', '=', batch.id)
      .where('owner', '=', workerId)
      .where('attached', '=', 0)
      .executeTakeFirst();
    if (!held) return; // another worker took the finalization over
    const lease = { batchId: batch.id, token: Number(held.token) };
    const finalizations = new BatchFinalizationRepository(db);
    const ids = finalizationFileIds(batch.id, lease.token);
    const finishedAt = Math.floor(clock.now() / 1000);
    const attached = await finalizations.attach(lease, {
      status: 'failed',
      failed_at: finishedAt,
      errors: JSON.stringify([entry]),
      output_file_id: null,
      error_file_id: null,
    });
    if (!attached) return;
    // What the failed attempt wrote belongs to no batch now.
    await finalizations.removeOutputFiles(batch.ownerKeyId, batch.id, [ids.output, ids.error]);
    await Promise.all([files.discardBytes(ids.output), files.discardBytes(ids.error)]);
    this.failures.delete(batch.id);
    this.options.onFinalized?.({ status: 'failed', createdAt: batch.createdAt, finishedAt });
  }
}
