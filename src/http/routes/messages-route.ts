/**
 * POST /v1/messages: the Anthropic Messages API in front of every model group. Callers authenticate with
 * the bearer header or `x-api-key` (the Anthropic SDK's), and every error, from authentication to the
 * upstream, answers in Anthropic's error shape (a route-scoped error handler, as /mcp has its own).
 */
import Type from 'typebox';
import { errors } from '../../lib/error-catalogue.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { decodeMessagesRequest } from '../../wire/messages/decode-messages-request.ts';
import { encodeMessage, messagesErrorBody } from '../../wire/messages/encode-message.ts';
import {
  encodeMessagesStream,
  encodeMessagesStreamError,
} from '../../wire/messages/encode-messages-stream.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { toGatewayError } from '../plugins/error-handler.ts';
import { callerSecurity } from '../schemas/common-schemas.ts';
import { answerText } from '../text-route.ts';

const MessagesBody = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    max_tokens: Type.Integer({ minimum: 1 }),
    messages: Type.Array(Type.Object({ role: Type.String() }, { additionalProperties: true }), {
      minItems: 1,
    }),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { additionalProperties: true },
);

const CUT_EVENT = encodeMessagesStreamError(errors.notReady());
const endpoint = { path: '/v1/messages' };

export function registerMessagesRoute(app: App, deps: Pick<AppDependencies, 'text' | 'config'>): void {
  const bodyLimit = deps.config.general_settings.max_request_body_bytes;
  app.post(
    '/v1/messages',
    {
      onRequest: app.authenticateCallerOrApiKey,
      errorHandler(error, request, reply) {
        const gatewayError = toGatewayError(error, request, bodyLimit);
        if (gatewayError.status >= 500 && !(error instanceof GatewayError))
          request.log.error({ err: error }, 'unexpected error');
        if (gatewayError.headers) reply.headers(gatewayError.headers);
        if (gatewayError.retryAfter !== undefined)
          reply.header('retry-after', String(gatewayError.retryAfter));
        return reply
          .code(gatewayError.status)
          .type('application/json')
          .send(messagesErrorBody(gatewayError, request.id));
      },
      schema: {
        tags: ['proxy'],
        security: [...callerSecurity, { anthropicApiKey: [] }],
        summary:
          'Create a message (Anthropic Messages API): JSON, or an event stream ended by message_stop when stream is true.',
        body: MessagesBody,
      },
    },
    async (request, reply) => {
      const chatRequest = decodeMessagesRequest(request.body);
      const model = chatRequest.model;
      return answerText(app, deps.text, request, reply, chatRequest, {
        endpoint,
        // An Anthropic deployment answered the Messages body natively: its answer goes back as it came.
        encodeJson: (response, _json, native) => native ?? encodeMessage(response, model),
        encodeStream: (chunks) => encodeMessagesStream(chunks, model),
        cutEvent: CUT_EVENT,
      });
    },
  );
}
