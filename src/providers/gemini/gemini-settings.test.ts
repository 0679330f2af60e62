import { describe, expect, it } from 'vitest';
import { geminiEndpoint, validateGeminiParams } from './gemini-settings.ts';

describe('geminiEndpoint', () => {
  it('adds /v1beta to a bare api_base, strips models/ and keeps the key out of the URL', () => {
    const endpoint = geminiEndpoint(
      { api_key: 'AIza-secret', headers: { 'x-team': 'a' } },
      'models/gemini-2.5-flash',
    );
    expect(endpoint).toEqual({
      origin: 'https://generativelanguage.googleapis.com',
      completePath: '/v1beta/models/gemini-2.5-flash:generateContent',
      streamPath: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
      headers: { 'x-team': 'a', 'x-goog-api-key': 'AIza-secret' },
    });
  });

  it('does not add a version api_base already ends with', () => {
    expect(geminiEndpoint({ api_base: 'https://proxy.test/google/v1/' }, 'g').completePath).toBe(
      '/google/v1/models/g:generateContent',
    );
    expect(geminiEndpoint({ api_base: 'http://127.0.0.1:9/v1beta' }, 'g').streamPath).toBe(
      '/v1beta/models/g:streamGenerateContent?alt=sse',
    );
  });
});

describe('validateGeminiParams', () => {
  it('accepts a model with a key, and a proxy api_base without one', () => {
    expect(validateGeminiParams({ model: 'gemini-2.5-flash', api_key: 'k', top_k: 3, stop: ['x'] })).toEqual(
      [],
    );
    expect(validateGeminiParams({ model: 'gemini-2.5-flash', api_base: 'https://proxy.test' })).toEqual([]);
  });

  it('names each problem', () => {
    expect(
      validateGeminiParams({
        model: 'models/',
        api_base: 'ftp://x',
        top_k: 0.5,
        temperature: 'hot',
        headers: { a: 1 },
      }),
    ).toEqual([
      'model: is required for gemini (the Gemini model, e.g. gemini-2.5-flash)',
      'api_base: must be an http(s) URL (default https://generativelanguage.googleapis.com)',
      'headers: must be a map of header names to strings',
      'temperature: must be a number',
      'top_k: must be an integer ≥ 1',
    ]);
    expect(validateGeminiParams({ model: 'gemini-2.5-flash' })).toEqual([
      'api_key: is required for the Gemini API (a key from Google AI Studio)',
    ]);
  });
});
