/** Checks of OpenAI-style embeddings and rerank answers: anything malformed is a protocol error. */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../upstream-error.ts';
import { readEmbeddingResponse } from './openai-embeddings.ts';
import { imageUsage, readImageResponse } from './openai-images.ts';
import { readCohereStyleAnswer, readTeiRanks } from './openai-rerank.ts';

function protocolFailure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof UpstreamError && error.kind === 'protocol') return error.message;
    throw error;
  }
  throw new Error('accepted');
}

const item = (index: number, embedding: unknown = [0.5]) => ({ object: 'embedding', index, embedding });

describe('readEmbeddingResponse', () => {
  it('sorts vectors into input order and says whether they came so', () => {
    const { response, ordered } = readEmbeddingResponse({ data: [item(1), item(0)], model: 'm' }, 2);
    expect(response.data.map((entry) => entry.index)).toEqual([0, 1]);
    expect(ordered).toBe(false);
    expect(readEmbeddingResponse({ data: [item(0), item(1)] }, 2).ordered).toBe(true);
  });

  it('refuses a wrong count, duplicate or out-of-range indexes, and vectors that are not floats or float32 base64', () => {
    for (const answer of [
      { data: [item(0)] },
      { data: [item(0), item(0)] },
      { data: [item(0), item(2)] },
      { data: [item(0), item(1, ['x'])] },
      { data: [item(0), item(1, 'AAA')] },
      { data: [item(0), item(1, 'AAAAAAA=')] },
      { data: 'no' },
      null,
    ]) {
      expect(protocolFailure(() => readEmbeddingResponse(answer, 2))).toBeTruthy();
    }
    expect(readEmbeddingResponse({ data: [item(0, 'AAAAAA=='), item(1, 'AACAPw==')] }, 2).ordered).toBe(true);
  });
});

describe('readCohereStyleAnswer', () => {
  it("reads Cohere's billed search units, sorts best first and cuts to top_n", () => {
    const result = readCohereStyleAnswer(
      {
        id: 'x',
        results: [
          { index: 0, relevance_score: 0.1 },
          { index: 2, relevance_score: 0.8 },
          { index: 1, relevance_score: 0.5 },
        ],
        meta: { billed_units: { search_units: 3 } },
      },
      3,
      2,
    );
    expect(result.response.results).toEqual([
      { index: 2, relevance_score: 0.8 },
      { index: 1, relevance_score: 0.5 },
    ]);
    expect(result.units).toEqual({ searches: 3 });
    expect(result.usage).toBeUndefined();
  });

  it('takes total_tokens alone as prompt tokens (Jina reports only the total)', () => {
    const result = readCohereStyleAnswer({ results: [], usage: { total_tokens: 9 } }, 1);
    expect(result.usage).toEqual({ prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 });
  });

  it('refuses results with an index outside the documents or without a finite score', () => {
    for (const results of [
      [{ index: 3, relevance_score: 1 }],
      [{ index: 0, relevance_score: 'high' }],
      [null],
    ])
      expect(protocolFailure(() => readCohereStyleAnswer({ results }, 3))).toBeTruthy();
    expect(protocolFailure(() => readTeiRanks({ results: [] }, 1, undefined))).toBeTruthy();
  });
});

describe('images answers', () => {
  it('needs a created time and a url or b64_json per image', () => {
    expect(protocolFailure(() => readImageResponse({ created: 1, data: [{}] }))).toBeTruthy();
    expect(protocolFailure(() => readImageResponse({ data: [] }))).toBeTruthy();
    expect(readImageResponse({ created: 1, data: [{ url: 'u' }] }).data).toHaveLength(1);
  });

  it('reports tokens only when the provider gave input_tokens', () => {
    expect(imageUsage(undefined)).toBeUndefined();
    expect(imageUsage({ input_tokens: 5, output_tokens: 7 })).toEqual({
      prompt_tokens: 5,
      completion_tokens: 7,
      total_tokens: 12,
    });
  });
});
