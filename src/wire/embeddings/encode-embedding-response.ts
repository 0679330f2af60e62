/**
 * Writes an embeddings answer in the OpenAI list shape for the caller: each vector in the encoding the
 * caller asked for (floats, or base64 of little-endian float32, which the `openai` SDK asks for by
 * default and decodes), `model` the caller's public model name, and usage when the provider reported it.
 * An upstream's own OpenAI JSON text is sent as it came, with only its `model` value replaced.
 */
import type { EmbeddingRequest, EmbeddingResponse, EmbeddingResult } from '../../canonical/modalities.ts';

export function encodeEmbeddingResponse(result: EmbeddingResult, request: EmbeddingRequest): string {
  if (result.json !== undefined) return withModelName(result.json, result.response.model, request.model);
  const base64 = request.encoding_format === 'base64';
  const response: EmbeddingResponse = {
    object: 'list',
    data: result.response.data.map((item) => ({
      object: 'embedding',
      index: item.index,
      embedding: base64 ? asBase64(item.embedding) : asFloats(item.embedding),
    })),
    model: request.model,
  };
  const usage = result.response.usage ?? result.usage;
  if (usage) response.usage = { prompt_tokens: usage.prompt_tokens, total_tokens: usage.total_tokens };
  return JSON.stringify(response);
}

/** A vector as base64 of its little-endian float32 bytes. */
export function floatsToBase64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let index = 0; index < vector.length; index++) bytes.writeFloatLE(vector[index]!, index * 4);
  return bytes.toString('base64');
}

/** The vector encoded by `floatsToBase64` (trailing bytes short of a float are ignored). */
export function base64ToFloats(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const vector = new Array<number>(Math.floor(bytes.length / 4));
  for (let index = 0; index < vector.length; index++) vector[index] = bytes.readFloatLE(index * 4);
  return vector;
}

function asBase64(embedding: number[] | string): string {
  return typeof embedding === 'string' ? embedding : floatsToBase64(embedding);
}

function asFloats(embedding: number[] | string): number[] {
  return typeof embedding === 'string' ? base64ToFloats(embedding) : embedding;
}

/**
 * `json` with its top-level `model` value replaced by the public name, without re-serializing the
 * vectors: the value is spliced when it occurs exactly once as `"model": <value>`; otherwise the answer
 * is parsed and written again.
 */
export function withModelName(json: string, upstreamModel: string, publicModel: string): string {
  if (upstreamModel === publicModel) return json;
  const pattern = new RegExp(`"model"\\s*:\\s*${escapeRegExp(JSON.stringify(upstreamModel))}`, 'g');
  const matches = [...json.matchAll(pattern)];
  if (matches.length === 1) {
    const match = matches[0]!;
    return `${json.slice(0, match.index)}"model":${JSON.stringify(publicModel)}${json.slice(match.index + match[0].length)}`;
  }
  return JSON.stringify({ ...(JSON.parse(json) as object), model: publicModel });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
