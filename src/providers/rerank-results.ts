/**
 * The ranked results of a rerank answer, read the same way from every provider: each an index into the
 * request's documents and a finite score, under whichever name the provider gives the score
 * (`relevance_score` in Cohere's format, `score` in TEI's); anything else is a protocol error.
 */
import type { RerankResponse } from '../canonical/modalities.ts';
import { protocolError } from './upstream-exchange.ts';

export type RankedResult = RerankResponse['results'][number];

/** `items` checked as ranks of `documentCount` documents, in the order the provider gave them. */
export function readRanks(
  items: unknown,
  documentCount: number,
  scoreField: 'relevance_score' | 'score' = 'relevance_score',
): RankedResult[] {
  if (!Array.isArray(items)) throw protocolError('the upstream answer is not a rerank result list');
  return items.map((item: unknown) => {
    const fields = (item ?? {}) as Record<string, unknown>;
    const index = fields.index;
    const score = fields[scoreField];
    if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= documentCount)
      throw protocolError('an upstream rerank result has no valid document index');
    if (typeof score !== 'number' || !Number.isFinite(score))
      throw protocolError('an upstream rerank result has no relevance score');
    return { index: index as number, relevance_score: score };
  });
}

/** The results best first, cut to `topN` (should the server have ignored it, or have no such field). */
export function bestOf(results: RankedResult[], topN: number | undefined): RankedResult[] {
  const best = results.sort((a, b) => b.relevance_score - a.relevance_score);
  return topN === undefined ? best : best.slice(0, topN);
}
