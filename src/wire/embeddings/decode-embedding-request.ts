/**
 * Decodes and validates an OpenAI embeddings body into the canonical request: `input` as one text, a
 * list of texts, one token array or a list of token arrays; `encoding_format`, `dimensions` and `user`
 * checked; other fields kept for OpenAI-compatible upstreams. Each refusal is a 400 naming the field.
 */
import type { EmbeddingRequest } from '../../canonical/modalities.ts';
import { errors } from '../../lib/error-catalogue.ts';

/** OpenAI's limit on the inputs of one request. */
export const MAX_EMBEDDING_INPUTS = 2048;
/** The most `dimensions` accepted: far above any embedding model's (3072 to 4096 today), but bounded. */
export const MAX_EMBEDDING_DIMENSIONS = 65_536;

export function decodeEmbeddingRequest(body: unknown): EmbeddingRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw errors.invalidRequest('The body must be a JSON object with model and input.');
  const request = { ...(body as Record<string, unknown>) };
  if (typeof request.model !== 'string' || request.model.length === 0)
    throw errors.invalidRequest(
      'model: must be a non-empty string naming an embedding model from GET /v1/models.',
      'model',
    );
  checkInput(request.input);
  // Null means "not set" for the optional fields; upstreams would refuse a literal null.
  for (const name of ['encoding_format', 'dimensions', 'user'] as const)
    if (request[name] === null) delete request[name];
  const format = request.encoding_format;
  if (format !== undefined && format !== 'float' && format !== 'base64')
    throw errors.invalidRequest('encoding_format: must be "float" or "base64".', 'encoding_format');
  const dimensions = request.dimensions;
  if (
    dimensions !== undefined &&
    !(
      Number.isInteger(dimensions) &&
      (dimensions as number) >= 1 &&
      (dimensions as number) <= MAX_EMBEDDING_DIMENSIONS
    )
  )
    throw errors.invalidRequest(
      `dimensions: must be an integer from 1 to ${MAX_EMBEDDING_DIMENSIONS}.`,
      'dimensions',
    );
  if (request.user !== undefined && typeof request.user !== 'string')
    throw errors.invalidRequest('user: must be a string.', 'user');
  return request as EmbeddingRequest;
}

function checkInput(input: unknown): void {
  const refuse = (detail: string) =>
    errors.invalidRequest(
      `input: ${detail} Send a string, a list of strings, a token array or a list of token arrays.`,
      'input',
    );
  if (typeof input === 'string') {
    if (input.length === 0) throw refuse('must not be an empty string.');
    return;
  }
  if (!Array.isArray(input)) throw refuse(`is ${input === undefined ? 'missing' : 'of the wrong type'}.`);
  if (input.length === 0) throw refuse('must not be an empty list.');
  if (input.length > MAX_EMBEDDING_INPUTS)
    throw refuse(`has ${input.length} items; at most ${MAX_EMBEDDING_INPUTS} are allowed in one request.`);
  const first = input[0];
  if (typeof first === 'string') {
    input.forEach((item, index) => {
      if (typeof item !== 'string')
        throw refuse(`item ${index} is not a string (a list must not mix types).`);
      if (item.length === 0) throw refuse(`item ${index} is an empty string.`);
    });
    return;
  }
  if (typeof first === 'number') {
    checkTokens(input, refuse, '');
    return;
  }
  if (Array.isArray(first)) {
    input.forEach((item, index) => {
      if (!Array.isArray(item))
        throw refuse(`item ${index} is not a token array (a list must not mix types).`);
      if (item.length === 0) throw refuse(`item ${index} is an empty token array.`);
      checkTokens(item, refuse, `item ${index}: `);
    });
    return;
  }
  throw refuse('items must be strings or token arrays.');
}

function checkTokens(tokens: unknown[], refuse: (detail: string) => Error, where: string): void {
  tokens.forEach((token, index) => {
    if (!Number.isSafeInteger(token) || (token as number) < 0)
      throw refuse(`${where}token ${index} is not a non-negative integer.`);
  });
}
