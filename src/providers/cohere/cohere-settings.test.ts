import { describe, expect, it } from 'vitest';
import { cohereEndpoint, validateCohereParams } from './cohere-settings.ts';

describe('cohereEndpoint', () => {
  it('puts /v2/embed and /v2/rerank under the default server, with the key as a bearer token', () => {
    expect(cohereEndpoint({ api_key: 'co-secret', extra_headers: { 'x-team': 'a' } })).toEqual({
      origin: 'https://api.cohere.com',
      embedPath: '/v2/embed',
      rerankPath: '/v2/rerank',
      headers: { 'x-team': 'a', authorization: 'Bearer co-secret' },
    });
  });

  it.each([
    'https://proxy.test/cohere',
    'https://proxy.test/cohere/',
    'https://proxy.test/cohere/v2',
    'https://proxy.test/cohere/v2/embed',
    'https://proxy.test/cohere/v2/rerank/',
  ])('reads LiteLLM’s api_base %s as the server both operations live under', (apiBase) => {
    const endpoint = cohereEndpoint({ api_base: apiBase });
    expect([endpoint.embedPath, endpoint.rerankPath]).toEqual(['/cohere/v2/embed', '/cohere/v2/rerank']);
    expect(endpoint.headers).toEqual({});
  });
});

describe('validateCohereParams', () => {
  it('accepts a model with a key, and a proxy api_base without one', () => {
    expect(validateCohereParams({ model: 'embed-v4.0', api_key: 'k', input_type: 'classification' })).toEqual(
      [],
    );
    expect(validateCohereParams({ model: 'rerank-v3.5', api_base: 'http://127.0.0.1:9' })).toEqual([]);
  });

  it('names every wrong param', () => {
    expect(
      validateCohereParams({
        model: '',
        api_base: 'ftp://x',
        api_key: 7,
        headers: { a: 1 },
        input_type: 'search',
        truncate: 'end',
      }),
    ).toEqual([
      'model: is required for cohere (the Cohere model, e.g. embed-v4.0 or rerank-v3.5)',
      'api_base: must be an http(s) URL (default https://api.cohere.com)',
      'api_key: must be a non-empty string',
      'headers: must be a map of header names to strings',
      'input_type: must be one of search_document, search_query, classification, clustering',
      'truncate: must be one of NONE, START, END',
    ]);
  });
});
