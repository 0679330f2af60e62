/**
 * Decodes and validates a rerank body (Cohere's shape, which LiteLLM and the OpenAI-compatible
 * rerankers share) into the canonical request: a non-empty `query`, a non-empty `documents` list of
 * strings or objects with a string `text`, `top_n` from 1 to 10,000 and a boolean `return_documents`; other fields
 * (Cohere's `max_tokens_per_doc`, `priority` …) are kept. Each refusal is a 400 naming the field.
 */
import type { RerankRequest } from '../../canonical/modalities.ts';
import { errors } from '../../lib/error-catalogue.ts';

/** Cohere's limit on the documents of one request. */
export const MAX_RERANK_DOCUMENTS = 10_000;

export function decodeRerankRequest(body: unknown): RerankRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw errors.invalidRequest('The body must be a JSON object with model, query and documents.');
  const request = { ...(body as Record<string, unknown>) };
  if (typeof request.model !== 'string' || request.model.length === 0)
    throw errors.invalidRequest(
      'model: must be a non-empty string naming a rerank model from GET /v1/models.',
      'model',
    );
  if (typeof request.query !== 'string' || request.query.trim().length === 0)
    throw errors.invalidRequest('query: must be a non-empty string.', 'query');
  checkDocuments(request.documents);
  for (const name of ['top_n', 'return_documents'] as const) if (request[name] === null) delete request[name];
  // Above the number of documents is fine (Cohere answers them all), up to the most documents allowed.
  const topN = request.top_n;
  if (
    topN !== undefined &&
    !(Number.isInteger(topN) && (topN as number) >= 1 && (topN as number) <= MAX_RERANK_DOCUMENTS)
  )
    throw errors.invalidRequest(`top_n: must be an integer from 1 to ${MAX_RERANK_DOCUMENTS}.`, 'top_n');
  if (request.return_documents !== undefined && typeof request.return_documents !== 'boolean')
    throw errors.invalidRequest('return_documents: must be true or false.', 'return_documents');
  return request as RerankRequest;
}

function checkDocuments(documents: unknown): void {
  const refuse = (detail: string) =>
    errors.invalidRequest(
      `documents: ${detail} Send a list of strings or of objects with a string "text".`,
      'documents',
    );
  if (!Array.isArray(documents)) throw refuse(`is ${documents === undefined ? 'missing' : 'not a list'}.`);
  if (documents.length === 0) throw refuse('must not be an empty list.');
  if (documents.length > MAX_RERANK_DOCUMENTS)
    throw refuse(`has ${documents.length} items; at most ${MAX_RERANK_DOCUMENTS} are allowed.`);
  documents.forEach((document, index) => {
    if (typeof document === 'string') return;
    const text =
      document !== null && typeof document === 'object' && !Array.isArray(document)
        ? (document as { text?: unknown }).text
        : undefined;
    if (typeof text !== 'string') throw refuse(`item ${index} is neither a string nor an object with text.`);
  });
}
