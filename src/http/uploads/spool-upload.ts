/**
 * Receives a multipart upload: the text fields in the order sent (the file may come before or after
 * them), and the one file streamed to a private temporary file (folder 0700 from mkdtemp, file 0600)
 * while its bytes are counted, so an oversized file is refused as soon as it passes the limit, never
 * held in memory. The file is read again for each attempt; it is deleted when the request ends, however
 * it ends (the route's `dispose`, or the caller's connection closing).
 */
import { openAsBlob } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UploadedFile } from '../../canonical/modalities.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { discardRest, MULTIPART_LIMITS, type UploadLimit } from './multipart-scope.ts';
import { uploadErrors } from './upload-errors.ts';

/** Every spool folder's name starts with this (under the OS temporary folder). */
export const SPOOL_PREFIX = 'switchboard-upload-';

export interface UploadOptions extends UploadLimit {
  /** The form field that carries the file. */
  fileField: string;
}

export interface ReceivedUpload {
  /** The text fields in the order sent; a name may repeat (`timestamp_granularities[]`). */
  fields: Array<[name: string, value: string]>;
  /** The spooled file, when the form had one. */
  file: UploadedFile | undefined;
  /** Deletes the spooled file (also done when the connection closes); safe to call twice. */
  dispose(): Promise<void>;
}

export async function receiveUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  options: UploadOptions,
): Promise<ReceivedUpload> {
  const spool = new Spool();
  reply.raw.once('close', () => void spool.dispose());
  const fields: Array<[string, string]> = [];
  let file: UploadedFile | undefined;
  try {
    const parts = request.parts({ limits: { fileSize: options.maxFileBytes + 1 } });
    for await (const part of parts) {
      if (part.type === 'field') {
        if (part.valueTruncated) throw uploadErrors.fieldTooLong(part.fieldname, MULTIPART_LIMITS.fieldSize);
        fields.push([part.fieldname, fieldText(part.value)]);
      } else if (part.fieldname !== options.fileField) {
        part.file.resume();
        throw uploadErrors.unexpectedFile(part.fieldname, options.fileField);
      } else {
        file = await spool.write(part, options);
      }
    }
    return { fields, file, dispose: () => spool.dispose() };
  } catch (error) {
    await spool.dispose();
    discardRest(request, options.maxFileBytes);
    throw uploadError(error, options);
  }
}

/** A spool folder for one request's file, created on first use. */
class Spool {
  private folder: string | undefined;
  private disposed = false;

  async write(part: MultipartFile, options: UploadOptions): Promise<UploadedFile> {
    const folder = await mkdtemp(join(tmpdir(), SPOOL_PREFIX));
    this.folder = folder;
    // The caller's connection closed while the folder was made: the close handler found nothing to delete.
    if (this.disposed) {
      await this.dispose();
      throw uploadErrors.malformed('the request was closed');
    }
    const path = join(folder, 'upload');
    const handle = await open(path, 'wx', 0o600);
    let bytes = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        if (bytes > options.maxFileBytes)
          done(uploadErrors.fileTooLarge(options.fileField, options.maxFileBytes, options.setting));
        else done(null, chunk);
      },
    });
    await pipeline(part.file, counter, handle.createWriteStream());
    if (this.disposed) throw uploadErrors.malformed('the request was closed');
    // Busboy ends a file cut at its own size limit without an error: the count above catches it.
    return spooledFile(path, filenameOf(part.filename), part.mimetype || 'application/octet-stream', bytes);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const folder = this.folder;
    this.folder = undefined;
    if (folder) await rm(folder, { recursive: true, force: true });
  }
}

function spooledFile(path: string, filename: string, contentType: string, bytes: number): UploadedFile {
  return {
    filename,
    contentType,
    bytes,
    open: () => createReadStream(path),
    blob: () => openAsBlob(path, { type: contentType }),
  };
}

async function* createReadStream(path: string): AsyncGenerator<Buffer> {
  const handle = await open(path, 'r');
  try {
    yield* handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>;
  } finally {
    await handle.close();
  }
}

/** A field's text; a part sent as application/json arrives parsed and goes back to its JSON text. */
function fieldText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The caller's file name without folders or control characters (OpenAI reads the format from its extension). */
function filenameOf(name: string | undefined): string {
  const base = (name ?? '').split(/[/\\]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = base.replace(/[\u0000-\u001f\u007f"]/g, '').slice(0, 255);
  return clean || 'upload';
}

/** The caller's error for a failed upload: ours as they are, the parser's limits and faults mapped. */
function uploadError(error: unknown, options: UploadOptions): GatewayError {
  if (error instanceof GatewayError) return error;
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case 'FST_FILES_LIMIT':
      return uploadErrors.oneFileOnly(options.fileField);
    case 'FST_FIELDS_LIMIT':
      return uploadErrors.formTooLarge('text fields', MULTIPART_LIMITS.fields);
    case 'FST_PARTS_LIMIT':
      return uploadErrors.formTooLarge('parts', MULTIPART_LIMITS.parts);
    case 'FST_PROTO_VIOLATION':
      return uploadErrors.malformed('a field name is reserved');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return uploadErrors.malformed('a field declared as application/json is not JSON');
    case 'FST_MP_PREMATURE_CLOSE':
      return uploadErrors.malformed('the body ended early');
  }
  return uploadErrors.malformed(error instanceof Error ? error.message.slice(0, 200) : 'unknown error');
}
