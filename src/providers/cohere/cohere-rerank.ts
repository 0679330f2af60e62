/**
 * Reranking through Cohere's `POST /v2/rerank`: documents go up as strings (an object's `text`), the
 * results come back best first with their index and score, `meta.billed_units.search_units` is the
 * billed searches (1 when absent), and documents are filled in from the request when the caller asked
 * `return_documents` (v2 no longer returns them).
 */

import type { RerankRequest, RerankResponse, RerankResult } from '../../canonical/modalities.ts';
import { documentTexts } from '../../canonical/modality-inputs.ts';
import { isCount } from '../../canonical/usage.ts';
import { errors } from '../../lib/error-catalogue.ts';
import type { AttemptContext, RerankCapability } from '../provider-adapter.ts';
import { readRanks } from '../rerank-results.ts';
import type { CoherePost } from './cohere-adapter.ts';

export class CohereRerank implements RerankCapability {
  private readonly post: CoherePost;

  constructor(post: CoherePost) {
    this.post = post;
  }

  async rerank(request: RerankRequest, context: AttemptContext): Promise<RerankResult> {
    const documents = documentTexts(request.documents);
    const body = {
      model: request.model,
      query: request.query,
      documents,
      ...(request.top_n !== undefined ? { top_n: positive(request.top_n, 'top_n') } : {}),
      ...(request.max_tokens_per_doc !== undefined
        ? { max_tokens_per_doc: positive(request.max_tokens_per_doc, 'max_tokens_per_doc') }
        : {}),
    };
    const parsed = (await this.post('rerank', body, context)) as {
      id?: unknown;
      results?: unknown;
      meta?: { billed_units?: { search_units?: unknown } };
    } | null;
    // Cohere answers best first; the order is kept.
    const results = readRanks(parsed?.results, documents.length);
    const billed = parsed?.meta?.billed_units?.search_units;
    const searches = isCount(billed) ? billed : 1;
    const response: RerankResponse = {
      ...(typeof parsed?.id === 'string' ? { id: parsed.id } : {}),
      results: results.map(({ index, relevance_score }) => ({
        index,
        relevance_score,
        ...(request.return_documents ? { document: { text: documents[index]! } } : {}),
      })),
      meta: { billed_units: { search_units: searches } },
      usage: { search_units: searches },
    };
    return { response, units: { searches } };
  }
}

function positive(value: unknown, param: string): number {
  if (!Number.isInteger(value) || (value as number) < 1)
    throw errors.invalidRequest(`${param}: must be a positive integer`, param);
  return value as number;
}
