/**
 * Finalization of a batch whose items are all done: one worker wins the `finalized` compare-and-set
 * (any other stops), writes the output file (2xx answers) and the error file (refusals and items that
 * never ran) in line order through BatchFiles, and moves the batch to its terminal status
 * (batch-object.ts finalStatus). A file with no lines is not written (its id stays null, as OpenAI).
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.ts';
import { BatchRepository } from '../store/db/repositories/batch-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { BatchFileOwner, BatchFiles } from './batch-files.ts';
import { type BatchLine, isOutputLine, resultLine } from './batch-lines.ts';
import { finalStatus } from './batch-object.ts';

const PAGE = 500;

export interface FinalizerOptions {
  db: Kysely<DatabaseSchema>;
  files: Pick<BatchFiles, 'writeOutput'>;
  clock: Clock;
}

/** Finalizes the batch; false when another worker already did (or does). */
export async function finalizeBatch(
  options: FinalizerOptions,
  batchId: string,
  expired: boolean,
): Promise<boolean> {
  const { db, files, clock } = options;
  const batches = new BatchRepository(db);
  const batch = await batches.get(batchId);
  if (!batch || batch.finalized) return false;
  const won = await db
    .updateTable('batches')
    .set({ finalized: 1 })
    .where('id', '=', batchId)
    .where('finalized', '=', 0)
    .executeTakeFirst();
  if (Number(won.numUpdatedRows) === 0) return false;
  const now = Math.floor(clock.now() / 1000);
  const status = finalStatus({ ...batch, expired });
  if (status !== 'cancelled' && status !== 'expired')
    await batches.update(batchId, { status: 'finalizing', finalizing_at: now });
  const owner: BatchFileOwner = { keyId: batch.owner_key_id, teamId: batch.owner_team_id };
  const output = await writeLines(files, batches, owner, batchId, `${batchId}_output.jsonl`, true);
  const errors = await writeLines(files, batches, owner, batchId, `${batchId}_error.jsonl`, false);
  const done = Math.floor(clock.now() / 1000);
  await batches.update(batchId, {
    status,
    [`${status}_at`]: done,
    output_file_id: output,
    error_file_id: errors,
  });
  return true;
}

async function writeLines(
  files: Pick<BatchFiles, 'writeOutput'>,
  batches: BatchRepository,
  owner: BatchFileOwner,
  batchId: string,
  filename: string,
  outputFile: boolean,
): Promise<string | null> {
  let any = false;
  for await (const _line of linesOf(batches, batchId, outputFile)) {
    any = true;
    break;
  }
  if (!any) return null;
  async function* text(): AsyncGenerator<string> {
    for await (const line of linesOf(batches, batchId, outputFile)) yield JSON.stringify(line);
  }
  const file = await files.writeOutput(owner, filename, text());
  return file.id;
}

async function* linesOf(
  batches: BatchRepository,
  batchId: string,
  outputFile: boolean,
): AsyncGenerator<BatchLine> {
  for (let from = 0; ; ) {
    const items = await batches.listItems(batchId, from, PAGE);
    for (const item of items) {
      const line = resultLine(batchId, item);
      if (isOutputLine(line) === outputFile) yield line;
    }
    if (items.length < PAGE) return;
    from = items[items.length - 1]!.line_index + 1;
  }
}
