/**
 * What the routes of the non-text endpoints (embeddings, images, audio, rerank) share: the pipeline's
 * context for a request (its caller, the signal that stops upstream work when the caller leaves, the
 * rate-limit token estimate), the routing and rate-limit headers of every answer, and the one
 * registrar of the JSON endpoints (embeddings, images, rerank), which differ only in their wire format.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { ModalityContext, ModalityOutcome } from '../proxy/modality-pipeline.ts';
import type { App } from './app-types.ts';
import { callerSignal } from './caller-signal.ts';
import { callerSecurity } from './schemas/common-schemas.ts';

/** One JSON modality endpoint: where it answers, its documented body, and its wire format around the pipeline. */
export interface JsonModalityRoute<Request, Result> {
  /** The paths it answers at (LiteLLM also serves its OpenAI routes without the /v1 prefix). */
  urls: readonly string[];
  /** The OpenAPI summary. */
  summary: string;
  /** The documented fields (TypeBox); the decoder checks them and keeps every other field. */
  body: TSchema;
  decode(body: unknown): Request;
  run(request: Request, context: ModalityContext): Promise<ModalityOutcome<Result>>;
  encode(result: Result, request: Request): string;
}

/** Registers a JSON endpoint: authenticate, decode (400 naming the field), run, answer JSON with the headers. */
export function registerJsonModalityRoute<Request, Result>(
  app: App,
  route: JsonModalityRoute<Request, Result>,
): void {
  for (const url of route.urls) {
    app.post(
      url,
      {
        onRequest: app.authenticateCaller,
        schema: { tags: ['proxy'], security: callerSecurity, summary: route.summary, body: route.body },
      },
      async (request, reply) => {
        const decoded = route.decode(request.body);
        const outcome = await route.run(decoded, jsonRequestContext(request, reply));
        return reply
          .headers(answerHeaders(request, outcome))
          .type('application/json')
          .send(route.encode(outcome.value, decoded));
      },
    );
  }
}

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
