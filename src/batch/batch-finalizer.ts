/**
 * Finalization of a batch whose items are all done, under a finalization lease (migration 0010): the
 * worker that claims the lease writes the output file (2xx answers) and the error file (refusals and
 * items that never ran) in line order through BatchFiles, renewing the lease per page, then attaches
 * them and moves the batch to its terminal status (batch-object.ts finalStatus) only while the lease is
 * still its own; a cancel that lands meanwhile makes it cancelled, and the attach clears the items'
 * bodies and answers (the files hold them). A worker that dies after claiming leaves the lease to expire; the next claim (a new
 * fencing token) first removes what earlier attempts wrote, found by their ids: files are named
 * `file-<batch id>-output-<token>` / `-error-<token>`. A file with no lines is not written (its id
 * stays null, as OpenAI).
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.ts';
import {
  BatchFinalizationRepository,
  type FinalizationLease,
} from '../store/db/repositories/batch-finalization-repository.ts';
import { BatchRepository } from '../store/db/repositories/batch-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { BatchFileOwner, BatchFiles } from './batch-files.ts';
import { type BatchLine, isOutputLine, resultLine } from './batch-lines.ts';
import { finalStatus, isTerminal } from './batch-object.ts';

const PAGE = 500;

export interface FinalizerOptions {
  db: Kysely<DatabaseSchema>;
  files: Pick<BatchFiles, 'writeOutput' | 'discardBytes'>;
  clock: Clock;
  /** This worker's id (the lease owner). */
  owner: string;
  leaseMs: number;
}

/** A batch this call moved to its terminal status (times in epoch seconds). */
export interface FinalizedBatch {
  status: 'completed' | 'failed' | 'expired' | 'cancelled';
  createdAt: number;
  finishedAt: number;
}

/** Ids of the output and error files of one finalization attempt. */
export function finalizationFileIds(batchId: string, token: number): { output: string; error: string } {
  return { output: `file-${batchId}-output-${token}`, error: `file-${batchId}-error-${token}` };
}

/** The lease was lost while writing (it expired and another worker claimed it). */
class LeaseLost extends Error {}

/** Finalizes the batch; undefined when another worker holds (or completed) its finalization. */
export async function finalizeBatch(
  options: FinalizerOptions,
  batchId: string,
  expired: boolean,
): Promise<FinalizedBatch | undefined> {
  const { db, files, clock } = options;
  const batches = new BatchRepository(db);
  const leases = new BatchFinalizationRepository(db);
  const batch = await batches.get(batchId);
  if (!batch || batch.finalized || isTerminal(batch.status)) return undefined;
  const lease = await leases.claim(batchId, options.owner, clock.now(), options.leaseMs);
  if (!lease) return undefined;
  // Planned from the read above; a cancel landing after it is honoured by attach (cancelled wins).
  const status = finalStatus({ ...batch, expired });
  if (status === 'completed')
    await batches.update(batchId, { status: 'finalizing', finalizing_at: seconds(clock) }, [
      'validating',
      'in_progress',
    ]);
  const owner: BatchFileOwner = { keyId: batch.owner_key_id, teamId: batch.owner_team_id };
  await removeEarlierAttempts(leases, files, owner, lease);
  const ids = finalizationFileIds(batchId, lease.token);
  const keep = async () => {
    if (!(await leases.renew(lease, clock.now() + options.leaseMs))) throw new LeaseLost();
  };
  try {
    const output = await writeLines(files, batches, owner, batchId, true, ids.output, keep);
    const errors = await writeLines(files, batches, owner, batchId, false, ids.error, keep);
    const finishedAt = seconds(clock);
    const attached = await leases.attach(lease, {
      status,
      [`${status}_at`]: finishedAt,
      output_file_id: output,
      error_file_id: errors,
    });
    if (!attached) throw new LeaseLost();
    return { status: attached, createdAt: batch.created_at, finishedAt };
  } catch (error) {
    if (!(error instanceof LeaseLost)) throw error;
    // Another worker owns the finalization now: what this attempt wrote is nobody's.
    await leases.removeOutputFiles(owner.keyId, batchId, [ids.output, ids.error]);
    await Promise.all([files.discardBytes(ids.output), files.discardBytes(ids.error)]);
    return undefined;
  }
}

/**
 * Removes the files of earlier attempts on this batch (a finalizer that died after writing some):
 * every row with an earlier token, and the bytes of the previous token even without a row (a death
 * between writing the bytes and inserting the row). Older tokens' bytes were removed by the claims
 * after them, before those wrote anything.
 */
async function removeEarlierAttempts(
  leases: BatchFinalizationRepository,
  files: Pick<BatchFiles, 'discardBytes'>,
  owner: BatchFileOwner,
  lease: FinalizationLease,
): Promise<void> {
  if (lease.token === 1) return;
  const removed = await leases.removeOutputFiles(owner.keyId, lease.batchId);
  const previous = finalizationFileIds(lease.batchId, lease.token - 1);
  const bytes = new Set([...removed, previous.output, previous.error]);
  await Promise.all([...bytes].map((id) => files.discardBytes(id)));
}

async function writeLines(
  files: Pick<BatchFiles, 'writeOutput'>,
  batches: BatchRepository,
  owner: BatchFileOwner,
  batchId: string,
  outputFile: boolean,
  id: string,
  keep: () => Promise<void>,
): Promise<string | null> {
  let any = false;
  for await (const _line of linesOf(batches, batchId, outputFile, keep)) {
    any = true;
    break;
  }
  if (!any) return null;
  async function* text(): AsyncGenerator<string> {
    for await (const line of linesOf(batches, batchId, outputFile, keep)) yield JSON.stringify(line);
  }
  const filename = `${batchId}_${outputFile ? 'output' : 'error'}.jsonl`;
  const file = await files.writeOutput(owner, filename, text(), id);
  return file.id;
}

/** The batch's lines of one file in line order; the lease is renewed before every page. */
async function* linesOf(
  batches: BatchRepository,
  batchId: string,
  outputFile: boolean,
  keep: () => Promise<void>,
): AsyncGenerator<BatchLine> {
  for (let from = 0; ; ) {
    await keep();
    const items = await batches.listItems(batchId, from, PAGE);
    for (const item of items) {
      const line = resultLine(batchId, item);
      if (isOutputLine(line) === outputFile) yield line;
    }
    if (items.length < PAGE) return;
    from = items[items.length - 1]!.line_index + 1;
  }
}

function seconds(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}
