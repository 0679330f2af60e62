/**
 * The one place errors become HTTP answers: GatewayErrors as the OpenAI envelope with their status,
 * `retry-after` and extra headers; Fastify's own errors (bad JSON, body too large, wrong content type)
 * mapped to the same envelope; a database outage as a retryable 503; anything unexpected logged and
 * answered as a sanitized 500. An error answered before the request body was read closes the connection.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { isDatabaseOutage } from '../../lib/database-outage.ts';
import { errors } from '../../lib/error-catalogue.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { jsonTextTooDeep, MAX_JSON_DEPTH } from '../../lib/json-depth.ts';
import { closeIfBodyUnread } from './body-admission.ts';

export function toGatewayError(error: unknown, request: FastifyRequest, bodyLimit: number): GatewayError {
  if (error instanceof GatewayError) return error;
  const fastifyError = error as FastifyError;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.bodyTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType(String(request.headers['content-type'] ?? 'none'));
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidJson('the body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.invalidJson('it could not be parsed');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.invalidRequest('The Content-Length header does not match the body.');
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400)
    return errors.invalidJson(error.message);
  // Any other client error of Fastify or a plugin (a bad URL, a path outside the static docs folder)
  // keeps its 4xx status in our envelope; only a failure of our own is a 500.
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return errors.clientError(status);
  // A key not yet cached, an admin read…: the database being down is its outage, not our failure.
  if (isDatabaseOutage(error)) return errors.databaseUnavailable();
  return errors.internal();
}

export function sendGatewayError(reply: FastifyReply, error: GatewayError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  return reply.code(error.status).type('application/json').send(error.toBody());
}

export const errorHandlerPlugin = fp(
  async (app: FastifyInstance) => {
    const bodyLimit = app.initialConfig.bodyLimit ?? 1_048_576;
    // Only JSON bodies are parsed: text/plain (which Fastify reads by default) answers 415 like any other type.
    app.removeContentTypeParser('text/plain');
    // JSON bodies are bounded in depth before they are parsed (routes with their own parser do the same).
    const parseJson = app.getDefaultJsonParser('error', 'ignore');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      if (jsonTextTooDeep(body as string)) return done(errors.jsonTooDeep(MAX_JSON_DEPTH), undefined);
      parseJson(request, body as string, done);
    });
    app.setErrorHandler((error, request, reply) => {
      const gatewayError = toGatewayError(error, request, bodyLimit);
      if (gatewayError.status >= 500 && !(error instanceof GatewayError)) {
        request.log.error({ err: error }, 'unexpected error');
      }
      closeIfBodyUnread(request, reply);
      return sendGatewayError(reply, gatewayError);
    });
    app.setNotFoundHandler((request, reply) =>
      sendGatewayError(reply, errors.routeNotFound(request.method, request.url.split('?')[0]!)),
    );
  },
  { name: 'switchboard-error-handler' },
);
