/** POST /v1/completions (legacy): the prompt is translated to chat and answered as `text_completion`. */
import Type from 'typebox';
import { errors } from '../../lib/error-catalogue.ts';
import { encodeChatStreamError } from '../../wire/chat/encode-chat-stream.ts';
import { decodeCompletionRequest } from '../../wire/completions/decode-completion-request.ts';
import { encodeCompletion, encodeCompletionStream } from '../../wire/completions/encode-completion.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { callerSecurity } from '../schemas/common-schemas.ts';
import { answerText } from '../text-route.ts';

const CompletionBody = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    prompt: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1 })]),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { additionalProperties: true },
);

const CUT_EVENT = encodeChatStreamError(errors.notReady());
const endpoint = { path: '/v1/completions' };

export function registerCompletionsRoute(app: App, deps: Pick<AppDependencies, 'text'>): void {
  for (const url of ['/v1/completions', '/completions']) {
    app.post(
      url,
      {
        onRequest: app.authenticateCaller,
        schema: {
          tags: ['proxy'],
          security: callerSecurity,
          summary:
            'Create a legacy text completion: the prompt is sent to the model as user messages (JSON, or an event stream ended by [DONE]).',
          body: CompletionBody,
        },
      },
      async (request, reply) => {
        const chatRequest = decodeCompletionRequest(request.body);
        const includeUsage = chatRequest.stream_options?.include_usage === true;
        return answerText(app, deps.text, request, reply, chatRequest, {
          endpoint,
          encodeJson: (response) => encodeCompletion(response),
          encodeStream: (chunks) => encodeCompletionStream(chunks, includeUsage),
          cutEvent: CUT_EVENT,
        });
      },
    );
  }
}
