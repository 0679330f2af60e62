import { describe, expect, it } from 'vitest';
import { BatchRequestError, parseCreateBatch } from './create-batch-request.ts';

const valid = { input_file_id: 'file-abc', endpoint: '/v1/embeddings' };

function refusal(body: unknown): string | undefined {
  try {
    parseCreateBatch(body);
    return undefined;
  } catch (error) {
    return error instanceof BatchRequestError ? error.param : 'other';
  }
}

describe('POST /v1/batches body', () => {
  it('defaults a missing or null completion_window to 24h', () => {
    expect(parseCreateBatch(valid)).toEqual({
      inputFileId: 'file-abc',
      endpoint: '/v1/embeddings',
      completionWindow: '24h',
      metadata: null,
    });
    expect(parseCreateBatch({ ...valid, completion_window: null }).completionWindow).toBe('24h');
    expect(parseCreateBatch({ ...valid, completion_window: '24h', metadata: { a: 'b' } }).metadata).toEqual({
      a: 'b',
    });
  });

  it('names the field it refuses', () => {
    expect(refusal([])).toBe('body');
    expect(refusal({ endpoint: '/v1/embeddings' })).toBe('input_file_id');
    expect(refusal({ ...valid, endpoint: '/v1/completions' })).toBe('endpoint');
    expect(refusal({ ...valid, completion_window: '48h' })).toBe('completion_window');
    expect(refusal({ ...valid, metadata: ['x'] })).toBe('metadata');
    expect(refusal({ ...valid, metadata: { n: 1 } })).toBe('metadata.n');
    expect(refusal({ ...valid, metadata: { v: 'x'.repeat(513) } })).toBe('metadata.v');
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v']));
    expect(refusal({ ...valid, metadata: many })).toBe('metadata');
  });
});
