/** The rerank wire format: Cohere-shaped requests checked by field; answers readable by Cohere v2 and LiteLLM. */
import { describe, expect, it } from 'vitest';
import type { RerankResult } from '../../canonical/modalities.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { decodeRerankRequest, MAX_RERANK_DOCUMENTS } from './decode-rerank-request.ts';
import { encodeRerankResponse } from './encode-rerank-response.ts';

function paramOf(body: unknown): string | null {
  try {
    decodeRerankRequest(body);
  } catch (error) {
    if (error instanceof GatewayError && error.status === 400) return error.param;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(body)}`);
}

const valid = { model: 'r', query: 'capital?', documents: ['Paris', { text: 'Rome', id: 7 }] };

describe('decodeRerankRequest', () => {
  it('accepts strings and objects with text, top_n and return_documents, keeping unknown fields', () => {
    const body = { ...valid, top_n: 1, return_documents: false, max_tokens_per_doc: 512 };
    expect(decodeRerankRequest(body)).toEqual(body);
  });

  it('refuses an empty query, empty or malformed documents, top_n < 1 and a non-boolean return_documents', () => {
    for (const [extra, param] of [
      [{ query: '' }, 'query'],
      [{ query: 3 }, 'query'],
      [{ documents: [] }, 'documents'],
      [{ documents: 'Paris' }, 'documents'],
      [{ documents: [3] }, 'documents'],
      [{ documents: [{ content: 'x' }] }, 'documents'],
      [{ documents: [null] }, 'documents'],
      [{ documents: [['x']] }, 'documents'],
      [{ top_n: 0 }, 'top_n'],
      [{ top_n: 1.5 }, 'top_n'],
      [{ top_n: 1e300 }, 'top_n'],
      [{ top_n: MAX_RERANK_DOCUMENTS + 1 }, 'top_n'],
      [{ return_documents: 'yes' }, 'return_documents'],
      [{ model: 4 }, 'model'],
    ] as const) {
      expect(paramOf({ ...valid, ...extra }), JSON.stringify(extra)).toBe(param);
    }
    expect(paramOf({ model: 'r', query: 'q' })).toBe('documents');
  });

  it('bounds top_n by the most documents a request may hold; more than this request has means all (L9)', () => {
    const all = { ...valid, top_n: MAX_RERANK_DOCUMENTS };
    expect(decodeRerankRequest(all)).toEqual(all);
    expect(paramOf({ ...valid, top_n: 1e300 })).toBe('top_n');
  });
});

describe('encodeRerankResponse', () => {
  const result: RerankResult = {
    response: {
      id: 'up-1',
      results: [
        { index: 1, relevance_score: 0.9 },
        { index: 0, relevance_score: 0.1 },
      ],
    },
    units: { searches: 1 },
    usage: { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 },
  };

  it('answers id, results with the documents from the request, billed search units and usage', () => {
    expect(JSON.parse(encodeRerankResponse(result, decodeRerankRequest(valid)))).toEqual({
      id: 'up-1',
      results: [
        { index: 1, relevance_score: 0.9, document: { text: 'Rome' } },
        { index: 0, relevance_score: 0.1, document: { text: 'Paris' } },
      ],
      meta: { billed_units: { search_units: 1 }, tokens: { input_tokens: 12, output_tokens: 0 } },
      usage: { search_units: 1, prompt_tokens: 12, total_tokens: 12 },
    });
  });

  it('leaves documents out when return_documents is false, and makes up an id when the provider gave none', () => {
    const answer = JSON.parse(
      encodeRerankResponse(
        { response: { results: [{ index: 0, relevance_score: 0.5 }] } },
        { ...valid, return_documents: false },
      ),
    );
    expect(answer.results).toEqual([{ index: 0, relevance_score: 0.5 }]);
    expect(answer.id).toMatch(/^rerank-/);
    expect(answer.meta).toEqual({});
  });
});
