/**
 * The hooks every file and batch route runs before its handler. Files and batches answer only when
 * general_settings.embeddings_batch_enabled is true; otherwise every route answers 404
 * `batches_disabled`, saying how to turn them on (checked before authentication: it reveals only the
 * gateway's configuration, and a client learns the fix at once). Then, once the key is known, each call
 * is admitted against the key's limits like any other call of the key (issue 25: a key at its
 * rpm_limit was refused chat but served files and batches).
 */
import type { onRequestAsyncHookHandler } from 'fastify';
import { errors } from '../lib/error-catalogue.ts';
import type { CallerAdmission } from '../limits/caller-admission.ts';

/** An onRequest hook refusing every request while batches are disabled. */
export function requireBatches(enabled: boolean): onRequestAsyncHookHandler {
  return async () => {
    if (!enabled) throw errors.batchesDisabled();
  };
}

/**
 * An onRequest hook (after authentication) admitting the call against the caller's rate limits,
 * max_parallel_requests and budgets, as one request of 1 token (spec: file and multipart requests
 * use a minimum estimate of 1 token); the answer carries the rate-limit headers, and the slot is
 * released when the answer ends, however it ends.
 */
export function admitCall(admission: Pick<CallerAdmission, 'admit'>): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const ticket = await admission.admit({
      caller: request.caller,
      // Not a model call: no per-model limit applies (no model group has an empty name).
      model: '',
      tokenEstimate: 1,
      requestId: request.id,
      reads: [],
    });
    reply.headers(ticket.headers);
    reply.raw.once('close', () => void ticket.settle({}));
  };
}
