/**
 * Embeddings for adapters whose provider has its own embedding API (Cohere, Gemini, Bedrock): the
 * texts of a canonical request, the checks of the vectors a provider answered, and the canonical
 * answer built from them in input order.
 */
import type { EmbeddingRequest, EmbeddingResult } from '../canonical/modalities.ts';
import { errors } from '../lib/error-catalogue.ts';

/**
 * The request's inputs as texts. Token arrays cannot be sent to a provider that embeds only text: a
 * 400 naming `input` (a GatewayError: the caller's request, not the deployment, is at fault).
 */
export function embeddingTexts(request: EmbeddingRequest, provider: string): string[] {
  const { input } = request;
  const texts = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(texts) || texts.length === 0)
    throw errors.invalidRequest('input: must be a string or a non-empty list of strings', 'input');
  if (!texts.every((text) => typeof text === 'string'))
    throw errors.invalidRequest(
      `input: token arrays are not supported by ${provider} embedding models; send the text`,
      'input',
    );
  return texts as string[];
}

/** The caller's `dimensions`, if given: a positive integer (the decoder checked it; this keeps types honest). */
export function requestedDimensions(request: EmbeddingRequest): number | undefined {
  const { dimensions } = request;
  if (dimensions === undefined) return undefined;
  if (!Number.isInteger(dimensions) || dimensions < 1)
    throw errors.invalidRequest('dimensions: must be a positive integer', 'dimensions');
  return dimensions;
}

/** Refuses `dimensions` for a model whose vectors have a fixed size. */
export function refuseDimensions(model: string): never {
  throw errors.invalidRequest(
    `dimensions: model '${model}' answers vectors of one fixed size; leave dimensions out`,
    'dimensions',
  );
}

/** A vector as a provider must send it: a non-empty list of finite numbers. */
export function isVector(value: unknown): value is number[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => typeof item === 'number' && Number.isFinite(item))
  );
}

/** The items in slices of at most `size`, in order. */
export function inBatches<T>(items: readonly T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let start = 0; start < items.length; start += size) batches.push(items.slice(start, start + size));
  return batches;
}

/**
 * The canonical answer: one float vector per input, in input order (the wire encoder writes base64 when
 * the caller asked for it), and usage only when the provider reported the prompt tokens (never
 * estimated).
 */
export function embeddingResult(
  request: EmbeddingRequest,
  vectors: readonly number[][],
  promptTokens: number | undefined,
): EmbeddingResult {
  const usage =
    promptTokens === undefined
      ? undefined
      : { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens };
  return {
    response: {
      object: 'list',
      data: vectors.map((embedding, index) => ({ object: 'embedding' as const, index, embedding })),
      model: request.model,
      ...(usage ? { usage: { prompt_tokens: usage.prompt_tokens, total_tokens: usage.total_tokens } } : {}),
    },
    ...(usage ? { usage } : {}),
  };
}
