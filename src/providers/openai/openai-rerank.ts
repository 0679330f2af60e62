/**
 * Rerank on OpenAI-compatible rerank servers at `<api_base>/rerank`, in one of two wire formats chosen
 * by the deployment's `rerank_format` param:
 * - `cohere` (default): vLLM, Jina and other Cohere-style servers take `{model, query, documents,
 *   top_n}` and answer `{id?, results: [{index, relevance_score}], usage?: {total_tokens}}` (Cohere's
 *   `meta.billed_units.search_units` is read too);
 * - `tei`: Hugging Face Text Embeddings Inference takes `{query, texts}` and answers a bare list of
 *   `{index, score}`; the best `top_n` are kept here, as TEI has no such field (other fields the caller
 *   sent are not sent to TEI).
 * Documents go up as their texts (the answer's documents are filled in from the request at the edge).
 */

import type { RerankRequest, RerankResponse, RerankResult } from '../../canonical/modalities.ts';
import { documentTexts } from '../../canonical/modality-inputs.ts';
import { isCount, type Usage } from '../../canonical/usage.ts';
import type { AttemptContext, RerankCapability } from '../provider-adapter.ts';
import { bestOf, readRanks } from '../rerank-results.ts';
import { protocolError } from '../upstream-exchange.ts';
import type { OpenAiTransport } from './openai-transport.ts';

export const RERANK_FORMATS = ['cohere', 'tei'] as const;
export type RerankFormat = (typeof RERANK_FORMATS)[number];

/** The deployment param that picks the format, and its check (for the provider's validation). */
export const RERANK_PARAMS = ['rerank_format'] as const;

export function rerankParamProblems(params: Readonly<Record<string, unknown>>): string[] {
  const format = params.rerank_format;
  return format === undefined || RERANK_FORMATS.includes(format as RerankFormat)
    ? []
    : [`rerank_format: must be one of ${RERANK_FORMATS.join(', ')}`];
}

export class OpenAiRerank implements RerankCapability {
  private readonly transport: OpenAiTransport;
  private readonly format: RerankFormat;

  constructor(transport: OpenAiTransport, format: RerankFormat = 'cohere') {
    this.transport = transport;
    this.format = format;
  }

  async rerank(request: RerankRequest, context: AttemptContext): Promise<RerankResult> {
    const texts = documentTexts(request.documents);
    if (this.format === 'tei') {
      const { parsed } = await this.transport.postJson('rerank', { query: request.query, texts }, context);
      return { response: readTeiRanks(parsed, texts.length, request.top_n), units: { searches: 1 } };
    }
    // Unknown fields go up as the caller sent them (vLLM's truncate_prompt_tokens, Cohere's priority …);
    // the documents' texts come back from the request, so the server need not return them.
    const { return_documents: _returned, ...rest } = request;
    const { parsed } = await this.transport.postJson('rerank', { ...rest, documents: texts }, context);
    return readCohereStyleAnswer(parsed, texts.length, request.top_n);
  }
}

/**
 * A Cohere-style answer: results best first (cut to `topN`, should the server have ignored it), tokens
 * from `usage`, search units from `meta` (1 when the server does not count them).
 */
export function readCohereStyleAnswer(value: unknown, count: number, topN?: number): RerankResult {
  const answer = value as { id?: unknown; results?: unknown; usage?: unknown; meta?: unknown } | null;
  if (answer === null || typeof answer !== 'object' || !Array.isArray(answer.results))
    throw protocolError('the upstream answer is not a rerank result list');
  const response: RerankResponse = { results: bestOf(readRanks(answer.results, count), topN) };
  if (typeof answer.id === 'string') response.id = answer.id;
  const billed = (answer.meta as { billed_units?: { search_units?: unknown } } | undefined)?.billed_units;
  const searches = isCount(billed?.search_units) ? billed.search_units : 1;
  const usage = rerankUsage(answer.usage);
  return { response, units: { searches }, ...(usage ? { usage } : {}) };
}

/** TEI's answer: a list of `{index, score}`, sorted best first and cut to `topN`. */
export function readTeiRanks(value: unknown, count: number, topN: number | undefined): RerankResponse {
  if (!Array.isArray(value)) throw protocolError('the upstream answer is not a TEI rank list');
  return { results: bestOf(readRanks(value, count, 'score'), topN) };
}

/** Tokens the server reported (vLLM: prompt_tokens and total_tokens; Jina: total_tokens). */
function rerankUsage(value: unknown): Usage | undefined {
  const usage = value as { prompt_tokens?: unknown; total_tokens?: unknown } | undefined;
  const total = usage?.total_tokens;
  if (!isCount(total)) return undefined;
  const prompt = isCount(usage?.prompt_tokens) ? usage.prompt_tokens : total;
  return { prompt_tokens: prompt, completion_tokens: 0, total_tokens: total };
}
