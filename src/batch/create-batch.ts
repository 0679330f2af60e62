/**
 * Creates a batch from a visible input file: its lines are streamed again from the store and written as
 * `batch_items` in bounded chunks inside one transaction (batch-repository createFromItems), so memory
 * does not grow with the file and a refusal (a line whose url is not the batch's endpoint) leaves no
 * half-created batch. The batch starts `validating` with a 24-hour window.
 */
import type { Readable } from 'node:stream';
import type { Clock } from '../lib/clock.ts';
import { errors } from '../lib/error-catalogue.ts';
import { newBase62Id } from '../lib/random.ts';
import type { BatchFileRecord } from '../store/db/repositories/batch-file-repository.ts';
import type {
  BatchRecord,
  BatchRepository,
  NewBatchItem,
} from '../store/db/repositories/batch-repository.ts';
import type { BatchFileOwner, BatchFiles } from './batch-files.ts';
import { type BatchInputLine, readBatchLines } from './batch-input-lines.ts';
import type { CreateBatchRequest } from './create-batch-request.ts';

/** OpenAI's only window, 24h (spec proxy rule 9). */
const WINDOW_SECONDS = 24 * 3600;

export interface CreateBatchDependencies {
  files: Pick<BatchFiles, 'content' | 'limits'>;
  batches: Pick<BatchRepository, 'createFromItems'>;
  clock: Clock;
}

export async function createBatch(
  deps: CreateBatchDependencies,
  owner: BatchFileOwner,
  request: CreateBatchRequest,
  file: BatchFileRecord,
): Promise<BatchRecord> {
  if (file.purpose !== 'batch')
    throw errors.invalidRequest(
      'input_file_id: the file must have been uploaded with purpose batch',
      'input_file_id',
    );
  const now = Math.floor(deps.clock.now() / 1000);
  const record: BatchRecord = {
    id: newBase62Id('batch_'),
    owner_key_id: owner.keyId,
    owner_team_id: owner.teamId,
    endpoint: request.endpoint,
    input_file_id: file.id,
    completion_window: request.completionWindow,
    status: 'validating',
    output_file_id: null,
    error_file_id: null,
    errors: null,
    metadata: request.metadata ? JSON.stringify(request.metadata) : null,
    total: 0,
    completed: 0,
    failed: 0,
    created_at: now,
    in_progress_at: null,
    expires_at: now + WINDOW_SECONDS,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    finalized: 0,
  };
  let source: Readable | undefined;
  try {
    record.total = await deps.batches.createFromItems(record, (scope) => {
      // Read through the transaction that inserts the items: it holds SQLite's only connection.
      source = deps.files.content(file, scope);
      return items(readBatchLines(source, deps.files.limits), request.endpoint);
    });
  } finally {
    source?.destroy();
  }
  return record;
}

async function* items(
  lines: AsyncIterable<BatchInputLine>,
  endpoint: CreateBatchRequest['endpoint'],
): AsyncGenerator<NewBatchItem> {
  for await (const line of lines) {
    if (line.url !== endpoint)
      throw errors.invalidRequest(
        `line ${line.lineNumber}: url ${line.url} differs from the batch endpoint ${endpoint}`,
        'url',
      );
    yield { line_index: line.index, custom_id: line.custom_id, body: JSON.stringify(line.body) };
  }
}
