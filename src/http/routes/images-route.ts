/** POST /v1/images/generations: validate, hand to the modality pipeline, answer OpenAI's images shape. */
import Type from 'typebox';
import { decodeImageRequest } from '../../wire/images/decode-image-request.ts';
import { encodeImageResponse } from '../../wire/images/encode-image-response.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { registerJsonModalityRoute } from '../modality-route.ts';

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
  registerJsonModalityRoute(app, {
    urls: ['/v1/images/generations', '/images/generations'],
    summary: 'Generate images from a prompt (groups with model_info.mode: image_generation).',
    body: ImageBody,
    decode: decodeImageRequest,
    run: (request, context) => deps.modalities.generateImages(request, context),
    encode: encodeImageResponse,
  });
}
