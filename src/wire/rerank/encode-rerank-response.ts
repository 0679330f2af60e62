/**
 * Writes a rerank answer that both Cohere's v2 clients and LiteLLM's read: `id`, `results[]` best first
 * with `index`, `relevance_score` and (unless the caller sent `return_documents: false`, LiteLLM's
 * default being true) `document: {text}` taken from the request, `meta.billed_units.search_units` as
 * billed, and `usage` with the search units and the tokens the provider reported.
 */

import type { RerankRequest, RerankResult } from '../../canonical/modalities.ts';
import { documentTexts } from '../../canonical/modality-inputs.ts';
import { newId } from '../../lib/random.ts';

interface RerankAnswer {
  id: string;
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
  meta: {
    billed_units?: { search_units: number };
    tokens?: { input_tokens: number; output_tokens: number };
  };
  usage: { search_units?: number; prompt_tokens?: number; total_tokens?: number };
}

export function encodeRerankResponse(result: RerankResult, request: RerankRequest): string {
  const texts = request.return_documents === false ? undefined : documentTexts(request.documents);
  const { usage, units } = result;
  const answer: RerankAnswer = {
    id: result.response.id ?? newId('rerank', '-'),
    results: result.response.results.map(({ index, relevance_score }) =>
      texts ? { index, relevance_score, document: { text: texts[index] ?? '' } } : { index, relevance_score },
    ),
    meta: {},
    usage: {},
  };
  if (units?.searches !== undefined) {
    answer.meta.billed_units = { search_units: units.searches };
    answer.usage.search_units = units.searches;
  }
  if (usage) {
    answer.meta.tokens = { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens };
    answer.usage.prompt_tokens = usage.prompt_tokens;
    answer.usage.total_tokens = usage.total_tokens;
  }
  return JSON.stringify(answer);
}
