/**
 * Multipart parsing for the routes that take uploads, bounded in part count and field size, and the
 * checks made before a body is read: the content type must be multipart/form-data and an announced
 * length must fit the file limit plus the form's fields. Registered inside each upload route's own
 * scope, so the JSON routes keep answering 415 to multipart bodies.
 */
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { uploadErrors } from './upload-errors.ts';

/** Bounds of one form: one file, a few text fields (a transcription prompt fits one field easily). */
export const MULTIPART_LIMITS = {
  /** Text fields. */
  fields: 32,
  /** Bytes of one text field's value. */
  fieldSize: 64 * 1024,
  /** Bytes of a field name. */
  fieldNameSize: 128,
  /** Files. */
  files: 1,
  /** Parts in all (fields and the file). */
  parts: 33,
  /** Header lines of one part. */
  headerPairs: 16,
} as const;

/** What the text fields and the framing of a form can add to the file's bytes (an announced length above is refused). */
export const FORM_ALLOWANCE_BYTES =
  MULTIPART_LIMITS.fields * (MULTIPART_LIMITS.fieldSize + MULTIPART_LIMITS.fieldNameSize + 1024) + 64 * 1024;

export interface UploadLimit {
  /** The largest file accepted, in bytes. */
  maxFileBytes: number;
  /** The setting that raises `maxFileBytes`, named in the 413. */
  setting: string;
}

/** Registers the multipart parser in an upload route's scope (call inside `app.register`). */
export async function registerMultipart(scope: FastifyInstance): Promise<void> {
  // Our spooler counts the file's bytes and answers the 413 itself, with the limit and the setting.
  await scope.register(fastifyMultipart, { limits: { ...MULTIPART_LIMITS }, throwFileSizeLimit: false });
}

/**
 * Refuses, before the body is read, a request that is not multipart/form-data (415) or whose announced
 * length cannot fit (413). The unread rest of a refused body is drained up to the limit, then the
 * connection is dropped.
 */
export function checkUploadRequest(request: FastifyRequest, limit: UploadLimit, endpoint: string): void {
  const contentType = request.headers['content-type'];
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType)) {
    discardRest(request, limit.maxFileBytes);
    throw uploadErrors.notMultipart(contentType ?? 'none', endpoint);
  }
  const announced = Number(request.headers['content-length']);
  if (announced > limit.maxFileBytes + FORM_ALLOWANCE_BYTES) {
    throw uploadErrors.bodyTooLarge(announced, limit.maxFileBytes, limit.setting);
  }
}

/**
 * Reads and drops what is left of a refused request body, so the caller can read the answer on a
 * connection that stays usable; past `capBytes` more, the connection is dropped instead.
 */
export function discardRest(request: FastifyRequest, capBytes: number): void {
  const raw = request.raw;
  if (raw.readableEnded || raw.destroyed) return;
  raw.unpipe();
  let discarded = 0;
  raw.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > capBytes) raw.socket?.destroy();
  });
  raw.on('error', () => {});
  raw.resume();
}
