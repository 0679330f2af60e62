/**
 * The body of POST /v1/batches, checked before anything is read or stored: `input_file_id` an id
 * (letters, digits, `-`, `_`), `endpoint` `/v1/embeddings` or `/v1/chat/completions`,
 * `completion_window` `24h` (missing or null means `24h`; anything else is a 400, spec proxy rule 9),
 * `metadata` null or at most 16 string pairs (keys ≤ 64 characters, values ≤ 512, as OpenAI; no NUL).
 * Failures name the field.
 */

export const BATCH_ENDPOINTS = ['/v1/embeddings', '/v1/chat/completions'] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

export interface CreateBatchRequest {
  inputFileId: string;
  endpoint: BatchEndpoint;
  completionWindow: '24h';
  metadata: Record<string, string> | null;
}

export class BatchRequestError extends Error {
  readonly param: string;

  constructor(param: string, message: string) {
    super(message);
    this.name = 'BatchRequestError';
    this.param = param;
  }
}

/** File ids are `file-` and base62; anything else (NUL bytes included) never names a file. */
const FILE_ID = /^[A-Za-z0-9_-]{1,128}$/;
const MAX_METADATA_PAIRS = 16;
const MAX_METADATA_KEY = 64;
const MAX_METADATA_VALUE = 512;

export function parseCreateBatch(body: unknown): CreateBatchRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BatchRequestError('body', 'the request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  const inputFileId = fields.input_file_id;
  if (typeof inputFileId !== 'string' || !FILE_ID.test(inputFileId))
    throw new BatchRequestError(
      'input_file_id',
      'input_file_id must be the id of an uploaded file (letters, digits, - and _; at most 128)',
    );
  const endpoint = fields.endpoint;
  if (!BATCH_ENDPOINTS.includes(endpoint as BatchEndpoint))
    throw new BatchRequestError(
      'endpoint',
      `endpoint must be one of ${BATCH_ENDPOINTS.join(', ')}; got ${JSON.stringify(endpoint ?? null)}`,
    );
  const window = fields.completion_window;
  if (window !== undefined && window !== null && window !== '24h')
    throw new BatchRequestError(
      'completion_window',
      `completion_window must be "24h" (the only supported window); got ${JSON.stringify(window)}`,
    );
  return {
    inputFileId,
    endpoint: endpoint as BatchEndpoint,
    completionWindow: '24h',
    metadata: parseMetadata(fields.metadata),
  };
}

function parseMetadata(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new BatchRequestError('metadata', 'metadata must be an object of string values');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_METADATA_PAIRS)
    throw new BatchRequestError(
      'metadata',
      `metadata holds at most ${MAX_METADATA_PAIRS} pairs; got ${entries.length}`,
    );
  for (const [key, item] of entries) {
    if (key.length > MAX_METADATA_KEY)
      throw new BatchRequestError(
        `metadata.${key.slice(0, 16)}…`,
        `metadata keys are at most ${MAX_METADATA_KEY} characters`,
      );
    if (typeof item !== 'string')
      throw new BatchRequestError(`metadata.${key}`, `metadata.${key} must be a string`);
    if (key.includes('\u0000') || item.includes('\u0000'))
      throw new BatchRequestError(
        `metadata.${key.replaceAll('\u0000', '')}`,
        'metadata holds a NUL character',
      );
    if (item.length > MAX_METADATA_VALUE)
      throw new BatchRequestError(
        `metadata.${key}`,
        `metadata values are at most ${MAX_METADATA_VALUE} characters`,
      );
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
