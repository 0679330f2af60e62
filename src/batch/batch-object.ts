/**
 * The OpenAI batch object and the batch state machine. Status flow (OpenAI's): validating →
 * in_progress → finalizing → completed | failed | expired; cancel moves validating or in_progress to
 * cancelling, and cancelling finalizes to cancelled. Timestamps are epoch seconds.
 */
import type { BatchesTable } from '../store/db/tables.ts';

export type BatchStatus =
  | 'validating'
  | 'in_progress'
  | 'finalizing'
  | 'completed'
  | 'failed'
  | 'expired'
  | 'cancelling'
  | 'cancelled';

/** The stored batch as this module reads it (the `batches` table's columns but its owner and fencing flag). */
export type BatchView = Omit<BatchesTable, 'owner_key_id' | 'owner_team_id' | 'finalized'>;

export interface BatchObject {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: BatchErrorEntry[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
}

export interface BatchErrorEntry {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'expired', 'cancelled']);

export function isTerminal(status: string): boolean {
  return TERMINAL.has(status);
}

/** Whether items of a batch in this status may still be claimed and run. */
export function runsItems(status: string): boolean {
  return status === 'validating' || status === 'in_progress';
}

/** OpenAI: a batch can be cancelled while validating or in progress; cancelling again is a no-op. */
export function cancellable(status: string): boolean {
  return status === 'validating' || status === 'in_progress' || status === 'cancelling';
}

/**
 * The terminal status a batch whose items are done finalizes to: cancelled when it was cancelling,
 * expired when its window passed with work left, else completed, even when not one item succeeded:
 * OpenAI's `failed` means the batch itself failed (its input, or here its finalization), while failed
 * requests are lines of the error file of a completed batch.
 */
export function finalStatus(batch: {
  status: string;
  expired: boolean;
}): 'cancelled' | 'expired' | 'completed' {
  if (batch.status === 'cancelling') return 'cancelled';
  if (batch.expired) return 'expired';
  return 'completed';
}

/** The column that records the time of entering a status. */
export function timestampColumn(status: BatchStatus): keyof BatchView {
  return status === 'validating' ? 'created_at' : (`${status}_at` as keyof BatchView);
}

export function batchObject(row: BatchView): BatchObject {
  return {
    id: row.id,
    object: 'batch',
    endpoint: row.endpoint,
    errors: row.errors ? { object: 'list', data: JSON.parse(row.errors) as BatchErrorEntry[] } : null,
    input_file_id: row.input_file_id,
    completion_window: row.completion_window,
    status: row.status as BatchStatus,
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    created_at: Number(row.created_at),
    in_progress_at: seconds(row.in_progress_at),
    expires_at: seconds(row.expires_at),
    finalizing_at: seconds(row.finalizing_at),
    completed_at: seconds(row.completed_at),
    failed_at: seconds(row.failed_at),
    expired_at: seconds(row.expired_at),
    cancelling_at: seconds(row.cancelling_at),
    cancelled_at: seconds(row.cancelled_at),
    request_counts: { total: row.total, completed: row.completed, failed: row.failed },
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : null,
  };
}

/** PostgreSQL returns bigint as a string; the object carries numbers. */
function seconds(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}
