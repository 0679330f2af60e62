/** POST /v1/rerank (and Cohere's /v2/rerank): validate, hand to the modality pipeline, answer ranked results. */
import Type from 'typebox';
import { decodeRerankRequest } from '../../wire/rerank/decode-rerank-request.ts';
import { encodeRerankResponse } from '../../wire/rerank/encode-rerank-response.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { registerJsonModalityRoute } from '../modality-route.ts';

/** The documented fields; the decoder checks them and keeps every other field for the upstream. */
const RerankBody = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    query: Type.Unknown({ description: 'A non-empty search query.' }),
    documents: Type.Unknown({
      description: 'A non-empty list of strings or of objects with a string "text" (at most 10000).',
    }),
    top_n: Type.Optional(Type.Unknown({ description: 'Answer only the best N (a positive integer).' })),
    return_documents: Type.Optional(
      Type.Unknown({ description: "Include each document's text in its result (default true)." }),
    ),
  },
  { additionalProperties: true },
);

export function registerRerankRoute(app: App, deps: Pick<AppDependencies, 'modalities'>): void {
  registerJsonModalityRoute(app, {
    // LiteLLM serves all three; Cohere's v2 SDK posts to /v2/rerank under its base URL.
    urls: ['/v1/rerank', '/rerank', '/v2/rerank'],
    summary: 'Rank documents by relevance to a query (groups with model_info.mode: rerank).',
    body: RerankBody,
    decode: decodeRerankRequest,
    run: (request, context) => deps.modalities.rerank(request, context),
    encode: encodeRerankResponse,
  });
}
