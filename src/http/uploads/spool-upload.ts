/**
 * Receives a multipart upload: the text fields in the order sent (the file may come before or after
 * them), and the one file streamed to a private temporary file (a request folder 0700 inside the
 * process's spool root, the file 0600) while its bytes are counted, so an oversized file is refused as
 * soon as it passes the limit, never held in memory. Its bytes count against the process's spool
 * budget from before the body is read (an announced length) or as they arrive, and are given back when
 * the file is deleted. The file is read again for each attempt; it is deleted when the request ends,
 * however it ends (the route's `dispose`, or the caller's connection closing).
 */
import { openAsBlob } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UploadedFile } from '../../canonical/modalities.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { discardRest, MULTIPART_LIMITS, type UploadLimit } from './multipart-scope.ts';
import { removeQuietly, type SpoolArea } from './spool-area.ts';
import { uploadErrors } from './upload-errors.ts';

export interface UploadOptions extends UploadLimit {
  /** The form field that carries the file. */
  fileField: string;
  /** Where the file is spooled, and the process-wide budget it counts against. */
  area: SpoolArea;
}

export interface ReceivedUpload {
  /** The text fields in the order sent; a name may repeat (`timestamp_granularities[]`). */
  fields: Array<[name: string, value: string]>;
  /** The spooled file, when the form had one. */
  file: UploadedFile | undefined;
  /** Deletes the spooled file (also done when the connection closes); safe to call twice; never rejects. */
  dispose(): Promise<void>;
}

export async function receiveUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  options: UploadOptions,
): Promise<ReceivedUpload> {
  const spool = new Spool(options, request.log);
  reply.raw.once('close', () => {
    spool
      .dispose()
      .catch((error: unknown) => request.log.error({ err: error }, 'upload spool cleanup failed'));
  });
  const fields: Array<[string, string]> = [];
  let file: UploadedFile | undefined;
  try {
    // An announced body reserves its file's share of the budget before a byte of it is read.
    const announced = Number(request.headers['content-length']);
    if (Number.isSafeInteger(announced) && announced > 0)
      spool.reserve(Math.min(announced, options.maxFileBytes));
    const parts = request.parts({ limits: { fileSize: options.maxFileBytes + 1 } });
    for await (const part of parts) {
      if (part.type === 'field') {
        if (part.valueTruncated) throw uploadErrors.fieldTooLong(part.fieldname, MULTIPART_LIMITS.fieldSize);
        fields.push([part.fieldname, fieldText(part.value)]);
      } else if (part.fieldname !== options.fileField) {
        part.file.resume();
        throw uploadErrors.unexpectedFile(part.fieldname, options.fileField);
      } else {
        file = await spool.write(part);
      }
    }
    return { fields, file, dispose: () => spool.dispose() };
  } catch (error) {
    await spool.dispose();
    discardRest(request, options.maxFileBytes);
    throw uploadError(error, options, request);
  }
}

/** A disk failure of our own while spooling (not the caller's body): answered 500, logged with its cause. */
class SpoolDiskError extends Error {
  constructor(cause: unknown) {
    super('the upload could not be stored', { cause });
  }
}

/** A spool folder for one request's file, created on first use, and its share of the spool budget. */
class Spool {
  private readonly options: UploadOptions;
  private readonly logger: FastifyRequest['log'];
  private folder: string | undefined;
  private reserved = 0;
  private disposed = false;

  constructor(options: UploadOptions, logger: FastifyRequest['log']) {
    this.options = options;
    this.logger = logger;
  }

  /** Reserves `bytes` more of the process-wide budget, or refuses the upload (503). */
  reserve(bytes: number): void {
    if (!this.options.area.take(bytes)) throw uploadErrors.spoolFull(this.options.area.maxSpoolBytes);
    this.reserved += bytes;
  }

  async write(part: MultipartFile): Promise<UploadedFile> {
    const { area, maxFileBytes, fileField, setting } = this.options;
    let folder: string;
    try {
      folder = await area.requestFolder();
    } catch (error) {
      throw new SpoolDiskError(error);
    }
    this.folder = folder;
    // The caller's connection closed while the folder was made: the close handler found nothing to delete.
    if (this.disposed) {
      await this.dispose();
      throw uploadErrors.malformed('the request was closed');
    }
    const path = join(folder, 'upload');
    const sink = await fileSink(path);
    let bytes = 0;
    const counter = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        bytes += chunk.length;
        if (bytes > maxFileBytes) return done(uploadErrors.fileTooLarge(fileField, maxFileBytes, setting));
        // Bytes past the announced reservation (a chunked body) are reserved as they arrive.
        if (bytes > this.reserved && !area.take(bytes - this.reserved))
          return done(uploadErrors.spoolFull(area.maxSpoolBytes));
        this.reserved = Math.max(this.reserved, bytes);
        done(null, chunk);
      },
    });
    await pipeline(part.file, counter, sink);
    if (this.disposed) throw uploadErrors.malformed('the request was closed');
    // The file is whole: what the announced length reserved beyond it goes back.
    area.give(this.reserved - bytes);
    this.reserved = bytes;
    // Busboy ends a file cut at its own size limit without an error: the count above catches it.
    return spooledFile(path, filenameOf(part.filename), part.mimetype || 'application/octet-stream', bytes);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const folder = this.folder;
    this.folder = undefined;
    if (folder) await removeQuietly(folder, this.logger);
    // The bytes are given back once the file is gone (or could not be deleted: the failure is logged).
    this.options.area.give(this.reserved);
    this.reserved = 0;
  }
}

/** A private file to write the upload into; its own failures become SpoolDiskError (the caller's do not). */
async function fileSink(path: string): Promise<Writable> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (error) {
    throw new SpoolDiskError(error);
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= handle.close();
    return closing;
  };
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      writeAll(handle, chunk).then(
        () => done(),
        (error: unknown) => done(new SpoolDiskError(error)),
      );
    },
    final(done) {
      close().then(
        () => done(),
        (error: unknown) => done(new SpoolDiskError(error)),
      );
    },
    destroy(error, done) {
      close().then(
        () => done(error),
        () => done(error),
      );
    },
  });
}

/** Writes the whole chunk (a write may take only part of it). */
async function writeAll(handle: FileHandle, chunk: Buffer): Promise<void> {
  for (let offset = 0; offset < chunk.length; ) {
    const { bytesWritten } = await handle.write(chunk, offset);
    offset += bytesWritten;
  }
}

function spooledFile(path: string, filename: string, contentType: string, bytes: number): UploadedFile {
  return { filename, contentType, bytes, blob: () => openAsBlob(path, { type: contentType }) };
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
function uploadError(error: unknown, options: UploadOptions, request: FastifyRequest): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof SpoolDiskError) {
    // Our disk, not the caller's body: the cause (with its path) is for the log only.
    request.log.error({ err: error.cause }, 'an upload could not be spooled to disk');
    return uploadErrors.spoolFailed();
  }
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
