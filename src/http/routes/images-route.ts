/** POST /v1/images/generations: validate, hand to the modality pipeline, answer OpenAI's images shape. */
import Type from 'typebox';
import { decodeImageRequest } from '../../wire/images/decode-image-request.ts';
import { encodeImageResponse } from '../../wire/images/encode-image-response.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { answerHeaders, jsonRequestContext } from '../modality-route.ts';
import { callerSecurity } from '../schemas/common-schemas.ts';

/** The documented fields; the decoder checks them and keeps every other field for the upstream. */
const ImageBody = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    prompt: Type.Unknown({ description: 'A non-empty description of the image.' }),
    size: Type.Optional(Type.Unknown({ description: '"<width>x<height>" (each 1 to 8192) or "auto".' })),
    n: Type.Optional(Type.Unknown({ description: 'How many images, 1 to 10.' })),
    response_format: Type.Optional(Type.Unknown({ description: '"url" or "b64_json".' })),
    quality: Type.Optional(
      Type.Unknown({ description: 'A string the model understands (standard, hd, …).' }),
    ),
    style: Type.Optional(Type.Unknown({ description: 'A string the model understands (vivid, natural).' })),
    user: Type.Optional(Type.Unknown({ description: 'A string identifying the end user.' })),
  },
  { additionalProperties: true },
);

export function registerImagesRoute(app: App, deps: Pick<AppDependencies, 'modalities'>): void {
  // LiteLLM also serves its OpenAI routes without the /v1 prefix; clients configured for it keep working.
  for (const url of ['/v1/images/generations', '/images/generations']) {
    app.post(
      url,
      {
        onRequest: app.authenticateCaller,
        schema: {
          tags: ['proxy'],
          security: callerSecurity,
          summary: 'Generate images from a prompt (groups with model_info.mode: image_generation).',
          body: ImageBody,
        },
      },
      async (request, reply) => {
        const imageRequest = decodeImageRequest(request.body);
        const outcome = await deps.modalities.generateImages(
          imageRequest,
          jsonRequestContext(request, reply),
        );
        return reply
          .headers(answerHeaders(request, outcome))
          .type('application/json')
          .send(encodeImageResponse(outcome.value));
      },
    );
  }
}
