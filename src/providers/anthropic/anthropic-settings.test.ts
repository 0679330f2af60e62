/** Params of anthropic deployments and the endpoint they describe. */
import { describe, expect, it } from 'vitest';
import { anthropicEndpoint, validateAnthropicParams } from './anthropic-settings.ts';

describe('anthropicEndpoint', () => {
  it.each([
    [undefined, 'https://api.anthropic.com', '/v1/messages'],
    ['https://api.anthropic.com/', 'https://api.anthropic.com', '/v1/messages'],
    ['https://api.anthropic.com/v1', 'https://api.anthropic.com', '/v1/messages'],
    ['http://proxy.internal:8080/anthropic/v1/', 'http://proxy.internal:8080', '/anthropic/v1/messages'],
  ])('api_base %s posts to %s%s', (apiBase, origin, path) => {
    expect(anthropicEndpoint({ model: 'm', api_base: apiBase })).toMatchObject({ origin, path });
  });

  it('sends the key as x-api-key, the version header and extra headers', () => {
    expect(
      anthropicEndpoint({
        api_key: 'sk-ant',
        headers: { 'anthropic-beta': 'x' },
        extra_headers: { 'x-team': 't' },
      }).headers,
    ).toEqual({
      'x-api-key': 'sk-ant',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'x',
      'x-team': 't',
    });
  });
});

describe('validateAnthropicParams', () => {
  it('accepts a complete deployment', () => {
    expect(
      validateAnthropicParams({
        model: 'claude-sonnet-4-5',
        api_key: 'k',
        api_base: 'https://api.anthropic.com',
        anthropic_version: '2023-06-01',
        max_tokens: 1024,
        temperature: 0.5,
        top_p: 0.9,
        top_k: 20,
        stop: ['END'],
      }),
    ).toEqual([]);
  });

  it('names each wrong param', () => {
    expect(
      validateAnthropicParams({
        api_base: 'not a url',
        max_tokens: 0,
        top_k: 1.5,
        stop: [1],
        headers: { a: 1 },
      }),
    ).toEqual([
      'model: is required (the Anthropic model id)',
      'api_base: must be an http(s) URL such as https://api.anthropic.com',
      'headers: must be a map of header names to strings',
      'top_k: must be an integer ≥ 0',
      'max_tokens: must be an integer ≥ 1',
      'stop: must be a string or a list of strings',
    ]);
  });
});
