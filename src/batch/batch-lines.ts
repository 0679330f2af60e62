/**
 * Lines of the output and error files in OpenAI's JSON-lines format. A call that answered is an output
 * line `{id, custom_id, response: {status_code, request_id, body}, error: null}`; a call refused with an
 * HTTP status goes to the error file with the same shape and the error envelope as `body`; an item that
 * never ran (cancelled, expired, owner key gone) has `response: null` and `error: {code, message}`.
 */

export interface ItemResponse {
  status_code: number;
  request_id: string;
  body: unknown;
}

export interface ItemError {
  code: string;
  message: string;
}

export interface BatchLine {
  id: string;
  custom_id: string;
  response: ItemResponse | null;
  error: ItemError | null;
}

/** The line's id: stable for an item, so a rewritten file keeps its ids. */
export function batchRequestId(batchId: string, lineIndex: number): string {
  return `batch_req_${batchId.replace(/^batch_/, '')}_${lineIndex}`;
}

export function resultLine(
  batchId: string,
  item: { line_index: number; custom_id: string; response: string | null; error: string | null },
): BatchLine {
  return {
    id: batchRequestId(batchId, item.line_index),
    custom_id: item.custom_id,
    response: item.response ? (JSON.parse(item.response) as ItemResponse) : null,
    error: item.error ? (JSON.parse(item.error) as ItemError) : null,
  };
}

/** Whether a finished item's line belongs to the output file (2xx answers) or the error file. */
export function isOutputLine(line: BatchLine): boolean {
  return line.response !== null && line.response.status_code >= 200 && line.response.status_code < 300;
}

export const NOT_RUN: Readonly<Record<'cancelled' | 'expired', ItemError>> = {
  cancelled: {
    code: 'batch_cancelled',
    message: 'This request was not executed because the batch was cancelled.',
  },
  expired: {
    code: 'batch_expired',
    message: 'This request could not be executed before the completion window expired.',
  },
};
