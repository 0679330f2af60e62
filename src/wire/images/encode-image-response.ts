/**
 * Writes an image-generation answer in OpenAI's shape (`created`, `data[]` of `url` or `b64_json` with
 * any `revised_prompt`, and `usage` when the provider reported it): an OpenAI-style upstream's JSON text
 * as it came, otherwise the canonical answer serialized.
 */
import type { ImageResult } from '../../canonical/modalities.ts';

export function encodeImageResponse(result: ImageResult): string {
  return result.json ?? JSON.stringify(result.response);
}
