/** POST /v1/embeddings: validate, hand to the modality pipeline, answer the OpenAI embeddings list. */
import Type from 'typebox';
import { decodeEmbeddingRequest } from '../../wire/embeddings/decode-embedding-request.ts';
import { encodeEmbeddingResponse } from '../../wire/embeddings/encode-embedding-response.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { registerJsonModalityRoute } from '../modality-route.ts';

/** The documented fields; the decoder checks them and keeps every other field for the upstream. */
const EmbeddingBody = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    input: Type.Unknown({
      description: 'A string, a list of strings, a token array or a list of token arrays (at most 2048).',
    }),
    encoding_format: Type.Optional(Type.Unknown({ description: '"float" (default) or "base64".' })),
    dimensions: Type.Optional(
      Type.Unknown({ description: 'A positive integer, for models that support it.' }),
    ),
    user: Type.Optional(Type.Unknown({ description: 'A string identifying the end user.' })),
  },
  { additionalProperties: true },
);

export function registerEmbeddingsRoute(app: App, deps: Pick<AppDependencies, 'modalities'>): void {
  registerJsonModalityRoute(app, {
    urls: ['/v1/embeddings', '/embeddings'],
    summary: 'Create embeddings for texts or token arrays (groups with model_info.mode: embedding).',
    body: EmbeddingBody,
    decode: decodeEmbeddingRequest,
    run: (request, context) => deps.modalities.embed(request, context),
    encode: encodeEmbeddingResponse,
  });
}
