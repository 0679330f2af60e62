/** The embeddings wire format: input validation naming the field, base64 float32, the caller's model name. */
import { describe, expect, it } from 'vitest';
import type { EmbeddingResult } from '../../canonical/modalities.ts';
import { embeddingInputCount } from '../../canonical/modality-inputs.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { decodeEmbeddingRequest, MAX_EMBEDDING_DIMENSIONS } from './decode-embedding-request.ts';
import {
  base64ToFloats,
  encodeEmbeddingResponse,
  floatsToBase64,
  withModelName,
} from './encode-embedding-response.ts';

function refusal(body: unknown): GatewayError {
  try {
    decodeEmbeddingRequest(body);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(body)}`);
}

describe('decodeEmbeddingRequest', () => {
  it('accepts each input form and keeps unknown fields for the upstream', () => {
    for (const input of ['a', ['a', 'b'], [1, 2, 3], [[1], [2, 3]]]) {
      expect(decodeEmbeddingRequest({ model: 'm', input, extra: 1 })).toEqual({
        model: 'm',
        input,
        extra: 1,
      });
    }
    const counts = ['a', ['a', 'b'], [1, 2], [[1], [2]]] as const;
    expect(counts.map((input) => embeddingInputCount(input as never))).toEqual([1, 2, 1, 2]);
  });

  it('drops null optional fields, which upstreams would refuse', () => {
    expect(
      decodeEmbeddingRequest({ model: 'm', input: 'a', encoding_format: null, dimensions: null }),
    ).toEqual({ model: 'm', input: 'a' });
  });

  it('refuses empty, mixed and malformed input with 400 naming input', () => {
    for (const input of [
      '',
      [],
      [''],
      ['a', 1],
      [1, 'a'],
      [1.5],
      [-1],
      [[]],
      [[1], 'a'],
      [[1, 'x']],
      [{}],
      undefined,
      7,
      { text: 'a' },
      Array.from({ length: 2049 }, () => 'a'),
    ]) {
      const error = refusal({ model: 'm', input });
      expect(error.status, JSON.stringify(input)?.slice(0, 40)).toBe(400);
      expect(error.param).toBe('input');
    }
  });

  it('refuses a bad encoding_format, dimensions, user or model naming each', () => {
    for (const [extra, param] of [
      [{ encoding_format: 'int8' }, 'encoding_format'],
      [{ dimensions: 0 }, 'dimensions'],
      [{ dimensions: 2.5 }, 'dimensions'],
      [{ dimensions: '8' }, 'dimensions'],
      [{ dimensions: 1e300 }, 'dimensions'],
      [{ dimensions: MAX_EMBEDDING_DIMENSIONS + 1 }, 'dimensions'],
      [{ user: 5 }, 'user'],
      [{ model: '' }, 'model'],
    ] as const) {
      expect(refusal({ model: 'm', input: 'a', ...extra }).param).toBe(param);
    }
    expect(refusal([1]).status).toBe(400);
  });

  it('bounds dimensions: 1e300 is an integer to JavaScript but no model has that many (L9)', () => {
    expect(refusal({ model: 'm', input: 'a', dimensions: 1e300 }).message).toContain(
      `from 1 to ${MAX_EMBEDDING_DIMENSIONS}`,
    );
    const largest = { model: 'm', input: 'a', dimensions: MAX_EMBEDDING_DIMENSIONS };
    expect(decodeEmbeddingRequest(largest)).toEqual(largest);
  });
});

describe('encodeEmbeddingResponse', () => {
  const result = (embedding: number[] | string, json?: string): EmbeddingResult => ({
    response: {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding }],
      model: 'upstream-model',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    },
    ...(json ? { json } : {}),
  });

  it('round-trips float32 vectors through little-endian base64 (what the openai SDK decodes)', () => {
    const vector = [0.5, -1, 0.25, 3.140000104904175];
    const text = floatsToBase64(vector);
    expect(Buffer.from(text, 'base64').readFloatLE(4)).toBe(-1);
    expect(base64ToFloats(text)).toEqual(vector);
  });

  it('answers base64 when the caller asked and the provider gave floats, with the public model name', () => {
    const answer = JSON.parse(
      encodeEmbeddingResponse(result([0.5, 0.25]), {
        model: 'public',
        input: 'x',
        encoding_format: 'base64',
      }),
    );
    expect(answer).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: floatsToBase64([0.5, 0.25]) }],
      model: 'public',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
  });

  it('answers floats when the caller asked for floats (or nothing) and the provider gave base64', () => {
    const answer = JSON.parse(
      encodeEmbeddingResponse(result(floatsToBase64([1, 2])), { model: 'p', input: 'x' }),
    );
    expect(answer.data[0].embedding).toEqual([1, 2]);
  });

  it("sends the upstream's JSON text with only its model value replaced", () => {
    const json =
      '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5]}],"model": "upstream-model","usage":{"prompt_tokens":3,"total_tokens":3}}';
    expect(encodeEmbeddingResponse(result([0.5], json), { model: 'public', input: 'x' })).toBe(
      json.replace('"model": "upstream-model"', '"model":"public"'),
    );
  });

  it('rewrites the whole answer when the model value is absent or ambiguous', () => {
    expect(JSON.parse(withModelName('{"data":[]}', '', 'public'))).toEqual({ data: [], model: 'public' });
    const twice = '{"model":"u","extra":{"model":"u"}}';
    expect(JSON.parse(withModelName(twice, 'u', 'p'))).toEqual({ model: 'p', extra: { model: 'u' } });
  });
});
