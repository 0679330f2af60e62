import { describe, expect, it } from 'vitest';
import { parseDuration, readGeminiError } from './gemini-errors.ts';

describe('readGeminiError', () => {
  it('reads error.status and the RetryInfo delay, ignoring other details', () => {
    const body = JSON.stringify({
      error: {
        code: 429,
        message: 'quota',
        status: 'RESOURCE_EXHAUSTED',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.Help', retryDelay: '99s' },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' },
        ],
      },
    });
    expect(readGeminiError(body)).toEqual({ providerCode: 'RESOURCE_EXHAUSTED', retryDelayMs: 7_000 });
  });

  it('finds both in a body cut short by the prefix bound', () => {
    const cut =
      '{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"retryDelay":"2.25s"},{"links":[';
    expect(readGeminiError(cut)).toEqual({ providerCode: 'RESOURCE_EXHAUSTED', retryDelayMs: 2_250 });
  });

  it('keeps no code that is not a short identifier, and nothing from text that is not an error', () => {
    expect(readGeminiError('{"error":{"status":"has spaces in it"}}')).toEqual({});
    expect(readGeminiError('<html>502</html>')).toEqual({});
  });
});

describe('parseDuration', () => {
  it.each([
    ['7s', 7_000],
    ['1.5s', 1_500],
    ['0.000001s', 0],
    ['86400s', 3_600_000],
    ['7', undefined],
    ['-1s', undefined],
    [7, undefined],
  ])('%s → %s', (value, expected) => {
    expect(parseDuration(value)).toBe(expected);
  });
});
