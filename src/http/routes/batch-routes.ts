/**
 * Batches (docs/batches.md): POST /v1/batches creates a batch from a visible input file (every line's
 * url must equal the batch's endpoint; 400 naming the line otherwise), GET lists the caller's batches
 * newest first (cursor `after`, `limit` 1..100, default 20), GET reads one, POST …/cancel moves a
 * running batch to cancelling (the worker stops new items and finalizes). OpenAI's batch object.
 * Served with and without the /v1 prefix, as the other OpenAI routes. Every route answers 404
 * `batches_disabled` while general_settings.embeddings_batch_enabled is false, and counts against the
 * key's limits like any other call (batch-gate.ts).
 */
import { type BatchFiles, ownerOf, viewerOf } from '../../batch/batch-files.ts';
import { batchObject, cancellable, isTerminal } from '../../batch/batch-object.ts';
import { createBatch } from '../../batch/create-batch.ts';
import { BatchRequestError, parseCreateBatch } from '../../batch/create-batch-request.ts';
import type { Caller } from '../../canonical/caller.ts';
import { errors } from '../../lib/error-catalogue.ts';
import type { BatchRecord, BatchRepository } from '../../store/db/repositories/batch-repository.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { admitCall, requireBatches } from '../batch-gate.ts';
import {
  BatchListQuery,
  BatchObject,
  BatchParams,
  CreateBatchBody,
  ListOf,
  listPage,
} from '../schemas/batch-views.ts';
import { callerSecurity, errorResponses } from '../schemas/common-schemas.ts';

const PREFIXES = ['/v1', ''] as const;

export function registerBatchRoutes(
  app: App,
  deps: Pick<AppDependencies, 'config' | 'batchFiles' | 'batches' | 'clock' | 'admission'>,
): void {
  const db = deps.batches;
  const enabled = deps.config.general_settings.embeddings_batch_enabled && deps.batchFiles !== undefined;
  const onRequest = [
    requireBatches(enabled && db !== undefined),
    app.authenticateCaller,
    admitCall(deps.admission),
  ];
  const files = (): BatchFiles => deps.batchFiles as BatchFiles;
  const batches = (): BatchRepository => db as BatchRepository;
  const schema = <Extra extends object>(summary: string, extra: Extra) => ({
    tags: ['proxy'],
    security: callerSecurity,
    summary,
    ...extra,
  });
  const answers = { 200: BatchObject, ...errorResponses };

  for (const prefix of PREFIXES) {
    app.post(
      `${prefix}/batches`,
      {
        onRequest,
        schema: schema('Create a batch from an uploaded input file.', {
          body: CreateBatchBody,
          response: { ...answers, 413: errorResponses[400] },
        }),
      },
      async (request) => {
        let parsed: ReturnType<typeof parseCreateBatch>;
        try {
          parsed = parseCreateBatch(request.body);
        } catch (error) {
          if (error instanceof BatchRequestError) throw errors.invalidRequest(error.message, error.param);
          throw error;
        }
        const file = await files().get(parsed.inputFileId, viewerOf(request.caller));
        if (!file)
          throw errors.invalidRequest(
            `input_file_id: no file ${parsed.inputFileId} is visible to this key`,
            'input_file_id',
          );
        const record = await createBatch(
          { files: files(), batches: batches(), clock: deps.clock },
          ownerOf(request.caller),
          parsed,
          file,
        );
        request.log.info({ batch_id: record.id, items: record.total }, 'batch created');
        return batchObject(record);
      },
    );

    app.get(
      `${prefix}/batches`,
      {
        onRequest,
        schema: schema(
          "List the caller's batches, newest first (cursor: after = the last id of the previous page).",
          {
            querystring: BatchListQuery,
            response: { 200: ListOf(BatchObject), ...errorResponses },
          },
        ),
      },
      async (request) => {
        const { after, limit } = request.query;
        const viewer = viewerOf(request.caller);
        if (after !== undefined && !(await batches().getVisible(after, viewer)))
          throw errors.invalidRequest(`after: no batch ${after} is visible to this key`, 'after');
        const page = await batches().list(viewer, { after, limit: limit ?? 20 });
        return listPage(page.items.map(batchObject), page.hasMore);
      },
    );

    app.get(
      `${prefix}/batches/:batch_id`,
      { onRequest, schema: schema('Read a batch.', { params: BatchParams, response: answers }) },
      async (request) => batchObject(await visibleBatch(batches(), request.caller, request.params.batch_id)),
    );

    app.post(
      `${prefix}/batches/:batch_id/cancel`,
      {
        onRequest,
        schema: schema('Cancel a batch: no new items start; it finalizes with partial output.', {
          params: BatchParams,
          response: { ...answers, 409: errorResponses[400] },
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
}

async function visibleBatch(batches: BatchRepository, caller: Caller, id: string): Promise<BatchRecord> {
  const batch = await batches.getVisible(id, viewerOf(caller));
  if (!batch) throw errors.notFound('batch', id);
  return batch;
}
