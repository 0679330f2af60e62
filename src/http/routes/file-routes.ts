/**
 * Files (docs/batches.md): POST /v1/files takes a batch input file (multipart: `purpose=batch`, `file`
 * in JSON lines), spooled like other uploads within general_settings.batch_file_max_bytes, validated
 * line by line, then stored; GET lists the caller's files (newest first, cursor `after`), reads one or
 * streams its content; DELETE removes it. Visible only to the key's team, or the key when it has none.
 * Every route answers 404 `batches_disabled` while general_settings.embeddings_batch_enabled is false,
 * and counts against the key's limits like any other call (batch-gate.ts).
 */
import type { BatchFiles } from '../../batch/batch-files.ts';
import { ownerOf, viewerOf } from '../../batch/batch-files.ts';
import type { Caller } from '../../canonical/caller.ts';
import { errors } from '../../lib/error-catalogue.ts';
import type { BatchFileRecord } from '../../store/db/repositories/batch-file-repository.ts';
import { canSee } from '../../store/db/repositories/batch-visibility.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { admitCall, requireBatches } from '../batch-gate.ts';
import {
  DeletedFile,
  FileListQuery,
  FileObject,
  FileParams,
  ListOf,
  listPage,
} from '../schemas/batch-views.ts';
import { callerSecurity, errorResponses } from '../schemas/common-schemas.ts';
import { checkUploadRequest, registerMultipart, type UploadLimit } from '../uploads/multipart-scope.ts';
import { SpoolArea } from '../uploads/spool-area.ts';
import { receiveUpload } from '../uploads/spool-upload.ts';

const ENDPOINT = '/v1/files';
/** Served with and without /v1, as LiteLLM serves its OpenAI routes and the other endpoints here. */
const PREFIXES = ['/v1', ''] as const;

/** The text fields POST /v1/files reads; any other is refused rather than ignored. */
const KNOWN_FIELDS = new Set(['purpose']);

export function fileView(file: BatchFileRecord) {
  return {
    id: file.id,
    object: 'file' as const,
    bytes: file.bytes,
    created_at: file.created_at,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed' as const,
    expires_at: null,
    status_details: null,
  };
}

export function registerFileRoutes(
  app: App,
  deps: Pick<AppDependencies, 'config' | 'logger' | 'batchFiles' | 'admission'>,
): void {
  const general = deps.config.general_settings;
  const gate = requireBatches(general.embeddings_batch_enabled && deps.batchFiles !== undefined);
  const files = (): BatchFiles => deps.batchFiles as BatchFiles;
  const limit: UploadLimit = {
    maxFileBytes: general.batch_file_max_bytes,
    setting: 'general_settings.batch_file_max_bytes',
  };
  const area = new SpoolArea({
    maxSpoolBytes: Math.max(general.max_upload_spool_bytes, general.batch_file_max_bytes),
    logger: deps.logger,
  });
  app.addHook('onReady', async () => {
    await area.sweep();
  });
  app.addHook('onClose', () => area.close());
  const onRequest = [gate, app.authenticateCaller, admitCall(deps.admission)];
  const schema = <Extra extends object>(summary: string, extra: Extra) => ({
    tags: ['proxy'],
    security: callerSecurity,
    summary,
    ...extra,
  });

  app.register(async (scope) => {
    await registerMultipart(scope);
    for (const prefix of PREFIXES)
      scope.post(
        `${prefix}/files`,
        {
          onRequest,
          preParsing: async (request, _reply, payload) => {
            checkUploadRequest(request, limit, ENDPOINT);
            return payload;
          },
          schema: schema(
            'Upload a batch input file (multipart/form-data: purpose=batch, file in JSON lines); every line is validated before it is stored.',
            {
              response: {
                200: FileObject,
                413: errorResponses[400],
                415: errorResponses[400],
                ...errorResponses,
              },
            },
          ),
        },
        async (request, reply) => {
          const upload = await receiveUpload(request, reply, { ...limit, fileField: 'file', area });
          try {
            const purpose = checkFields(upload.fields);
            const file = upload.file;
            if (!file)
              throw errors.invalidRequest('Send the batch input file in the form field file.', 'file');
            const record = await files().createInput(ownerOf(request.caller), {
              filename: file.filename,
              bytes: file.bytes,
              open: () => blobChunks(file.blob()),
            });
            request.log.info({ file_id: record.id, purpose, lines: record.line_count }, 'batch file stored');
            return fileView(record);
          } finally {
            await upload.dispose();
          }
        },
      );
  });

  for (const prefix of PREFIXES) {
    const path = `${prefix}/files`;
    app.get(
      path,
      {
        onRequest,
        schema: schema(
          "List the caller's files, newest first unless order=asc (cursor: after = the last id of the previous page).",
          { querystring: FileListQuery, response: { 200: ListOf(FileObject), ...errorResponses } },
        ),
      },
      async (request) => {
        const { after, limit: pageSize, purpose, order } = request.query;
        const viewer = viewerOf(request.caller);
        if (after !== undefined) {
          // A deleted file still marks its place; one never visible is refused, not read as "from the start".
          const cursor = await files().repository.get(after);
          if (!cursor || !canSee(viewer, cursor))
            throw errors.invalidRequest(`after: no file ${after} is visible to this key`, 'after');
        }
        const page = await files().list(viewer, { after, limit: pageSize ?? 10_000, purpose, order });
        return listPage(page.items.map(fileView), page.hasMore);
      },
    );

    app.get(
      `${path}/:file_id`,
      {
        onRequest,
        schema: schema('Read a file object.', {
          params: FileParams,
          response: { 200: FileObject, ...errorResponses },
        }),
      },
      async (request) => fileView(await visibleFile(files(), request.caller, request.params.file_id)),
    );

    app.get(
      `${path}/:file_id/content`,
      {
        onRequest,
        schema: schema("Download a file's content (JSON lines), streamed.", { params: FileParams }),
      },
      async (request, reply) => {
        const file = await visibleFile(files(), request.caller, request.params.file_id);
        const stream = files().content(file);
        return reply
          .type('application/octet-stream')
          .header('content-length', file.bytes)
          .header(
            'content-disposition',
            `attachment; filename="${file.filename.replace(/[^\x20-\x7e]|"/g, '_')}"`,
          )
          .send(stream);
      },
    );

    app.delete(
      `${path}/:file_id`,
      {
        onRequest,
        schema: schema('Delete a file.', {
          params: FileParams,
          response: { 200: DeletedFile, ...errorResponses },
        }),
      },
      async (request) => {
        const file = await visibleFile(files(), request.caller, request.params.file_id);
        const deleted = await files().delete(file.id);
        if (!deleted) throw errors.notFound('file', file.id);
        return { id: file.id, object: 'file' as const, deleted: true };
      },
    );
  }
}

/** The file, or 404 alike for "no such file" and "not yours" (existence is not revealed). */
async function visibleFile(files: BatchFiles, caller: Caller, id: string): Promise<BatchFileRecord> {
  const file = await files.get(id, viewerOf(caller));
  if (!file) throw errors.notFound('file', id);
  return file;
}

function checkFields(fields: ReadonlyArray<[string, string]>): string {
  let purpose: string | undefined;
  for (const [name, value] of fields) {
    if (!KNOWN_FIELDS.has(name))
      throw errors.invalidRequest(
        `The form field ${name} is not read by ${ENDPOINT}; send only purpose and file.`,
        name,
      );
    purpose = value;
  }
  if (purpose === undefined)
    throw errors.invalidRequest('The form field purpose is required: send purpose=batch.', 'purpose');
  if (purpose !== 'batch')
    throw errors.invalidRequest(
      `purpose ${JSON.stringify(purpose.slice(0, 64))} is not supported: this gateway stores files for batches only (purpose=batch).`,
      'purpose',
    );
  return purpose;
}

async function* blobChunks(blob: Promise<Blob>): AsyncGenerator<Uint8Array> {
  const stream = (await blob).stream();
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) yield chunk;
}
