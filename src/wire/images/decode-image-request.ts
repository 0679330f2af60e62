/**
 * Decodes and validates an OpenAI image-generation body into the canonical request: a non-empty
 * `prompt`, `size` as `<W>x<H>` within sane bounds (or `auto`), `n` from 1 to 10, `response_format`
 * `url` or `b64_json`, and string `quality`, `style` and `user`; other fields are kept for OpenAI-style
 * upstreams. Each refusal is a 400 naming the field.
 */
import type { ImageRequest } from '../../canonical/modalities.ts';
import { errors } from '../../lib/error-catalogue.ts';

/** The largest side accepted in `size` (today's models top out well below it). */
export const MAX_IMAGE_SIDE = 8192;
export const MAX_IMAGES = 10;

export function decodeImageRequest(body: unknown): ImageRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw errors.invalidRequest('The body must be a JSON object with model and prompt.');
  const request = { ...(body as Record<string, unknown>) };
  if (typeof request.model !== 'string' || request.model.length === 0)
    throw errors.invalidRequest(
      'model: must be a non-empty string naming an image model from GET /v1/models.',
      'model',
    );
  if (typeof request.prompt !== 'string' || request.prompt.trim().length === 0)
    throw errors.invalidRequest('prompt: must be a non-empty string describing the image.', 'prompt');
  // Null means "not set" for the optional fields; upstreams would refuse a literal null.
  for (const name of ['size', 'n', 'response_format', 'quality', 'style', 'user'] as const)
    if (request[name] === null) delete request[name];
  if (request.size !== undefined) checkSize(request.size);
  const count = request.n;
  if (
    count !== undefined &&
    !(Number.isInteger(count) && (count as number) >= 1 && (count as number) <= MAX_IMAGES)
  )
    throw errors.invalidRequest(`n: must be an integer from 1 to ${MAX_IMAGES}.`, 'n');
  const format = request.response_format;
  if (format !== undefined && format !== 'url' && format !== 'b64_json')
    throw errors.invalidRequest('response_format: must be "url" or "b64_json".', 'response_format');
  for (const name of ['quality', 'style', 'user'] as const) {
    if (request[name] !== undefined && typeof request[name] !== 'string')
      throw errors.invalidRequest(`${name}: must be a string.`, name);
  }
  return request as ImageRequest;
}

function checkSize(size: unknown): void {
  if (size === 'auto') return;
  const match = typeof size === 'string' ? /^(\d{1,5})x(\d{1,5})$/.exec(size) : null;
  const width = Number(match?.[1]);
  const height = Number(match?.[2]);
  if (!match || width < 1 || height < 1 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE)
    throw errors.invalidRequest(
      `size: must be "auto" or "<width>x<height>" in pixels, each from 1 to ${MAX_IMAGE_SIDE} (like "1024x1024").`,
      'size',
    );
}
