/**
 * Files and batches answer only when general_settings.embeddings_batch_enabled is true; otherwise every
 * file and batch route answers 404 `batches_disabled`, saying how to turn them on. The check runs before
 * authentication: it reveals only the gateway's configuration, and a client learns the fix at once.
 */
import type { onRequestAsyncHookHandler } from 'fastify';
import { ErrorType } from '../lib/error-catalogue.ts';
import { GatewayError } from '../lib/gateway-error.ts';

export function batchesDisabled(): GatewayError {
  return new GatewayError({
    status: 404,
    type: ErrorType.notFound,
    code: 'batches_disabled',
    message:
      'Files and batches are disabled on this gateway. The operator enables them with general_settings.embeddings_batch_enabled: true.',
  });
}

/** An onRequest hook refusing every request while batches are disabled. */
export function requireBatches(enabled: boolean): onRequestAsyncHookHandler {
  return async () => {
    if (!enabled) throw batchesDisabled();
  };
}
