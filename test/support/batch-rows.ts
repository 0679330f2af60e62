/** Rows of a chat batch and its items as the batch tests insert them (BatchRepository.create). */
import type { BatchRepository } from '../../src/store/db/repositories/batch-repository.ts';

type BatchRow = Parameters<BatchRepository['create']>[0];
type ItemRow = Parameters<BatchRepository['create']>[1][number];

/** A `/v1/chat/completions` batch of `total` items owned by key-1, created at `now` (epoch seconds) with
 * a 24 h window, nothing run yet; `fields` overrides any column. */
export function chatBatchRow(
  id: string,
  now: number,
  total: number,
  fields: Partial<BatchRow> = {},
): BatchRow {
  return {
    id,
    owner_key_id: 'key-1',
    owner_team_id: null,
    endpoint: '/v1/chat/completions',
    input_file_id: 'file-in',
    completion_window: '24h',
    status: 'in_progress',
    output_file_id: null,
    error_file_id: null,
    errors: null,
    metadata: null,
    total,
    completed: 0,
    failed: 0,
    created_at: now,
    in_progress_at: null,
    expires_at: now + 86_400,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    finalized: 0,
    ...fields,
  };
}

/** One chat item per content, `custom_id` c0, c1, … */
export function chatItemRows(contents: readonly string[]): ItemRow[] {
  return contents.map((content, index) => ({
    line_index: index,
    custom_id: `c${index}`,
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content }] }),
  }));
}
