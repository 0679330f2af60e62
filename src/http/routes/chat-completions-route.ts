/** POST /v1/chat/completions: validate, hand to the text pipeline, write JSON or the event stream. */
import Type from 'typebox';
import { errors } from '../../lib/error-catalogue.ts';
import { decodeChatRequest } from '../../wire/chat/decode-chat-request.ts';
import { encodeChatStream, encodeChatStreamError } from '../../wire/chat/encode-chat-stream.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { callerSecurity } from '../schemas/common-schemas.ts';
import { answerText } from '../text-route.ts';

/** The documented core of the request; every other chat-completions field passes through untouched. */
const ChatCompletionBody = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    messages: Type.Array(Type.Object({ role: Type.String() }, { additionalProperties: true }), {
      minItems: 1,
    }),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    max_completion_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    tools: Type.Optional(Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true }))),
  },
  { additionalProperties: true },
);

/** Ends a stream still open when a shutdown's grace period runs out (no [DONE]: the answer is incomplete). */
const CUT_EVENT = encodeChatStreamError(errors.notReady());

const endpoint = { path: '/v1/chat/completions' };

export function registerChatCompletionsRoute(app: App, deps: Pick<AppDependencies, 'text'>): void {
  // LiteLLM also serves its OpenAI routes without the /v1 prefix; clients configured for it keep working.
  for (const url of ['/v1/chat/completions', '/chat/completions']) registerChatRoute(app, deps, url);
}

function registerChatRoute(app: App, deps: Pick<AppDependencies, 'text'>, url: string): void {
  app.post(
    url,
    {
      onRequest: app.authenticateCaller,
      schema: {
        tags: ['proxy'],
        security: callerSecurity,
        summary: 'Create a chat completion (JSON, or an event stream ended by [DONE] when stream is true).',
        body: ChatCompletionBody,
      },
    },
    async (request, reply) => {
      const chatRequest = decodeChatRequest(request.body);
      const includeUsage = chatRequest.stream_options?.include_usage === true;
      return answerText(app, deps.text, request, reply, chatRequest, {
        endpoint,
        encodeJson: (response, json) => json ?? JSON.stringify(response),
        encodeStream: (chunks) => encodeChatStream(chunks, includeUsage),
        cutEvent: CUT_EVENT,
      });
    },
  );
}
