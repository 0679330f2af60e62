/** The image-generation wire format: size, n, response_format and prompt checked, naming the field. */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/gateway-error.ts';
import { decodeImageRequest } from './decode-image-request.ts';
import { encodeImageResponse } from './encode-image-response.ts';

function paramOf(body: unknown): string | null {
  try {
    decodeImageRequest(body);
  } catch (error) {
    if (error instanceof GatewayError && error.status === 400) return error.param;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(body)}`);
}

describe('decodeImageRequest', () => {
  it('accepts the OpenAI fields, <W>x<H> and auto sizes, and keeps unknown fields', () => {
    const body = {
      model: 'm',
      prompt: 'a lighthouse',
      size: '1792x1024',
      n: 2,
      response_format: 'b64_json',
      quality: 'hd',
      style: 'vivid',
      background: 'transparent',
    };
    expect(decodeImageRequest(body)).toEqual(body);
    expect(decodeImageRequest({ model: 'm', prompt: 'x', size: 'auto', n: null })).toEqual({
      model: 'm',
      prompt: 'x',
      size: 'auto',
    });
  });

  it('refuses a malformed or out-of-bounds size, n outside 1..10, a bad response_format, an empty prompt', () => {
    for (const [extra, param] of [
      [{ size: '1024' }, 'size'],
      [{ size: '1024x' }, 'size'],
      [{ size: '0x1024' }, 'size'],
      [{ size: '1024x99999' }, 'size'],
      [{ size: '-5x5' }, 'size'],
      [{ size: ' 1024x1024' }, 'size'],
      [{ size: 1024 }, 'size'],
      [{ n: 0 }, 'n'],
      [{ n: 11 }, 'n'],
      [{ n: 1.5 }, 'n'],
      [{ response_format: 'png' }, 'response_format'],
      [{ quality: 3 }, 'quality'],
      [{ style: [] }, 'style'],
      [{ prompt: '' }, 'prompt'],
      [{ prompt: '   ' }, 'prompt'],
      [{ prompt: 5 }, 'prompt'],
      [{ model: '' }, 'model'],
    ] as const) {
      expect(paramOf({ model: 'm', prompt: 'x', ...extra }), JSON.stringify(extra)).toBe(param);
    }
  });
});

describe('encodeImageResponse', () => {
  it("sends the upstream's text when at hand, else the canonical answer", () => {
    const response = { created: 1, data: [{ url: 'https://example.test/a.png' }] };
    expect(encodeImageResponse({ response, json: '{"raw":true}' })).toBe('{"raw":true}');
    expect(JSON.parse(encodeImageResponse({ response }))).toEqual(response);
  });
});
