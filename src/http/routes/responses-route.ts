/** POST /v1/responses: the stateless subset of OpenAI's Responses API, answered through chat. */
import Type from 'typebox';
import { errors } from '../../lib/error-catalogue.ts';
import { decodeResponsesRequest } from '../../wire/responses/decode-responses-request.ts';
import { encodeResponse } from '../../wire/responses/encode-response.ts';
import {
  encodeResponsesStream,
  encodeResponsesStreamError,
} from '../../wire/responses/encode-responses-stream.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { callerSecurity } from '../schemas/common-schemas.ts';
import { answerText } from '../text-route.ts';

const ResponsesBody = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    input: Type.Union([
      Type.String(),
      Type.Array(Type.Object({}, { additionalProperties: true }), { minItems: 1 }),
    ]),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  },
  { additionalProperties: true },
);

const CUT_EVENT = encodeResponsesStreamError(errors.notReady());
const endpoint = { path: '/v1/responses' };

export function registerResponsesRoute(app: App, deps: Pick<AppDependencies, 'text' | 'clock'>): void {
  for (const url of ['/v1/responses', '/responses']) {
    app.post(
      url,
      {
        onRequest: app.authenticateCaller,
        schema: {
          tags: ['proxy'],
          security: callerSecurity,
          summary:
            'Create a response (stateless Responses API subset): JSON, or the Responses event stream ended by response.completed and [DONE].',
          body: ResponsesBody,
        },
      },
      async (request, reply) => {
        const { request: chatRequest, echo } = decodeResponsesRequest(request.body);
        const createdAt = Math.floor(deps.clock.now() / 1000);
        return answerText(app, deps.text, request, reply, chatRequest, {
          endpoint,
          encodeJson: (response) => encodeResponse(response, echo),
          encodeStream: (chunks) => encodeResponsesStream(chunks, echo, createdAt),
          cutEvent: CUT_EVENT,
        });
      },
    );
  }
}
