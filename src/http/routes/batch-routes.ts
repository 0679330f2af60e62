/**
 * Batches (docs/batches.md): POST /v1/batches creates a batch from a visible input file (every line's
 * url must equal the batch's endpoint; 400 naming the line otherwise), GET lists the caller's batches
 * newest first (cursor `after`, `limit` 1..100, default 20), GET reads one, POST …/cancel moves a
 * running batch to cancelling (the worker stops new items and finalizes). OpenAI's batch object.
 * Every route answers 404 `batches_disabled` while general_settings.embeddings_batch_enabled is false.
 */
import Type from 'typebox';
import { type BatchFiles, ownerOf, viewerOf } from '../../batch/batch-files.ts';
import { batchObject, cancellable, isTerminal } from '../../batch/batch-object.ts';
import { BatchRequestError, parseCreateBatch } from '../../batch/create-batch-request.ts';
import type { Caller } from '../../canonical/caller.ts';
import { errors } from '../../lib/error-catalogue.ts';
import { newBase62Id } from '../../lib/random.ts';
import type {
  BatchRecord,
  BatchRepository,
  NewBatchItem,
} from '../../store/db/repositories/batch-repository.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { requireBatches } from '../batch-gate.ts';
import { callerSecurity } from '../schemas/common-schemas.ts';

const WINDOW_SECONDS = 24 * 3600;
const BatchParams = Type.Object({ batch_id: Type.String({ minLength: 1, maxLength: 128 }) });
const ListQuery = Type.Object({
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
});

export function registerBatchRoutes(
  app: App,
  deps: Pick<AppDependencies, 'config' | 'batchFiles' | 'batches' | 'clock'>,
): void {
  const db = deps.batches;
  const enabled = deps.config.general_settings.embeddings_batch_enabled && deps.batchFiles !== undefined;
  const onRequest = [requireBatches(enabled && db !== undefined), app.authenticateCaller];
  const files = (): BatchFiles => deps.batchFiles as BatchFiles;
  const batches = (): BatchRepository => db as BatchRepository;
  const schema = <Extra extends object>(summary: string, extra: Extra) => ({
    tags: ['proxy'],
    security: callerSecurity,
    summary,
    ...extra,
  });

  app.post(
    '/v1/batches',
    { onRequest, schema: schema('Create a batch from an uploaded input file.', {}) },
    async (request) => {
      let parsed: ReturnType<typeof parseCreateBatch>;
      try {
        parsed = parseCreateBatch(request.body);
      } catch (error) {
        if (error instanceof BatchRequestError) throw errors.invalidRequest(error.message, error.param);
        throw error;
      }
      const file = await files().get(parsed.inputFileId, viewerOf(request.caller));
      if (!file || file.deleted_at !== null)
        throw errors.invalidRequest(
          `input_file_id: no file ${parsed.inputFileId} is visible to this key`,
          'input_file_id',
        );
      if (file.purpose !== 'batch')
        throw errors.invalidRequest(
          'input_file_id: the file must have been uploaded with purpose batch',
          'input_file_id',
        );
      const items: NewBatchItem[] = [];
      for await (const line of files().inputLines(file)) {
        if (line.url !== parsed.endpoint)
          throw errors.invalidRequest(
            `line ${line.lineNumber}: url ${line.url} differs from the batch endpoint ${parsed.endpoint}`,
            'url',
          );
        items.push({ line_index: line.index, custom_id: line.custom_id, body: JSON.stringify(line.body) });
      }
      const now = Math.floor(deps.clock.now() / 1000);
      const owner = ownerOf(request.caller);
      const record: BatchRecord = {
        id: newBase62Id('batch_'),
        owner_key_id: owner.keyId,
        owner_team_id: owner.teamId,
        endpoint: parsed.endpoint,
        input_file_id: file.id,
        completion_window: parsed.completionWindow,
        status: 'validating',
        output_file_id: null,
        error_file_id: null,
        errors: null,
        metadata: parsed.metadata ? JSON.stringify(parsed.metadata) : null,
        total: items.length,
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
      await batches().create(record, items);
      request.log.info({ batch_id: record.id, items: items.length }, 'batch created');
      return batchObject(record);
    },
  );

  app.get(
    '/v1/batches',
    { onRequest, schema: schema("List the caller's batches, newest first.", { querystring: ListQuery }) },
    async (request) => {
      const page = await batches().list(viewerOf(request.caller), {
        after: request.query.after,
        limit: request.query.limit ?? 20,
      });
      const data = page.items.map(batchObject);
      return {
        object: 'list' as const,
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: page.hasMore,
      };
    },
  );

  app.get(
    '/v1/batches/:batch_id',
    { onRequest, schema: schema('Read a batch.', { params: BatchParams }) },
    async (request) => batchObject(await visibleBatch(batches(), request.caller, request.params.batch_id)),
  );

  app.post(
    '/v1/batches/:batch_id/cancel',
    {
      onRequest,
      schema: schema('Cancel a batch: no new items start; it finalizes with partial output.', {
        params: BatchParams,
      }),
    },
    async (request) => {
      const batch = await visibleBatch(batches(), request.caller, request.params.batch_id);
      if (!cancellable(batch.status))
        throw errors.conflict(
          `batch ${batch.id} is ${batch.status}${isTerminal(batch.status) ? ' (finished)' : ''}; it cannot be cancelled`,
        );
      const now = Math.floor(deps.clock.now() / 1000);
      await batches().update(batch.id, { status: 'cancelling', cancelling_at: now }, [
        'validating',
        'in_progress',
      ]);
      return batchObject((await batches().get(batch.id))!);
    },
  );
}

async function visibleBatch(batches: BatchRepository, caller: Caller, id: string): Promise<BatchRecord> {
  const batch = await batches.getVisible(id, viewerOf(caller));
  if (!batch) throw errors.notFound('batch', id);
  return batch;
}
