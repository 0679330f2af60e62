/**
 * What the routes of the non-text endpoints (embeddings, images, audio, rerank) share: the pipeline's
 * context for a request (its caller, the signal that stops upstream work when the caller leaves, the
 * rate-limit token estimate) and the routing and rate-limit headers of every answer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ModalityContext, ModalityOutcome } from '../proxy/modality-pipeline.ts';
import { callerSignal } from './caller-signal.ts';

/** The pipeline context of a JSON request: the token estimate is the body's length / 4 (spec). */
export function jsonRequestContext(request: FastifyRequest, reply: FastifyReply): ModalityContext {
  const bodyBytes = Number(request.headers['content-length'] ?? 0) || JSON.stringify(request.body).length;
  return { ...uploadContext(request, reply), tokenEstimate: Math.ceil(bodyBytes / 4) };
}

/** The pipeline context of a multipart upload: one token, so request-count limits still apply (spec). */
export function uploadContext(request: FastifyRequest, reply: FastifyReply): ModalityContext {
  return { caller: request.caller, signal: callerSignal(reply), requestId: request.id, tokenEstimate: 1 };
}

/** The headers of an answer: rate limits, request id, the deployment that answered and the attempts. */
export function answerHeaders(
  request: FastifyRequest,
  outcome: Omit<ModalityOutcome<unknown>, 'value'>,
): Record<string, string> {
  return {
    ...outcome.headers,
    'x-request-id': request.id,
    'x-switchboard-deployment': outcome.deploymentId,
    'x-switchboard-attempts': String(outcome.attempts),
  };
}
