import { describe, expect, it } from 'vitest';
import { isOutputLine, resultLine } from './batch-lines.ts';
import { batchObject, cancellable, finalStatus, runsItems } from './batch-object.ts';
import { fairOrder, shareSlots } from './fair-order.ts';
import { decideFailure } from './item-decisions.ts';

const row = {
  id: 'batch_abc',
  endpoint: '/v1/embeddings',
  input_file_id: 'file-x',
  completion_window: '24h',
  status: 'in_progress',
  output_file_id: null,
  error_file_id: null,
  errors: null,
  metadata: '{"a":"b"}',
  total: 3,
  completed: 1,
  failed: 1,
  created_at: 100,
  in_progress_at: '101' as unknown as number,
  expires_at: 86_500,
  finalizing_at: null,
  completed_at: null,
  failed_at: null,
  expired_at: null,
  cancelling_at: null,
  cancelled_at: null,
};

describe('batch object', () => {
  it('is the OpenAI shape with numeric timestamps and parsed metadata', () => {
    const object = batchObject(row);
    expect(object).toMatchObject({
      object: 'batch',
      in_progress_at: 101,
      request_counts: { total: 3, completed: 1, failed: 1 },
      metadata: { a: 'b' },
      errors: null,
    });
  });

  it('finalizes to cancelled, expired or completed (completed even when every request failed, as OpenAI)', () => {
    expect(finalStatus({ status: 'cancelling', expired: true })).toBe('cancelled');
    expect(finalStatus({ status: 'in_progress', expired: true })).toBe('expired');
    expect(finalStatus({ status: 'in_progress', expired: false })).toBe('completed');
    expect(finalStatus({ status: 'finalizing', expired: false })).toBe('completed');
  });

  it('runs items only before finalizing and cancels only unfinished batches', () => {
    expect(runsItems('in_progress')).toBe(true);
    expect(runsItems('cancelling')).toBe(false);
    expect(cancellable('completed')).toBe(false);
    expect(cancellable('cancelling')).toBe(true);
  });
});

describe('batch lines', () => {
  it('puts 2xx answers in the output file and the rest in the error file', () => {
    const ok = resultLine('batch_abc', {
      line_index: 0,
      custom_id: 'a',
      response: '{"status_code":200,"request_id":"r","body":{}}',
      error: null,
    });
    expect(ok).toEqual({
      id: 'batch_req_abc_0',
      custom_id: 'a',
      response: { status_code: 200, request_id: 'r', body: {} },
      error: null,
    });
    expect(isOutputLine(ok)).toBe(true);
    const cancelled = resultLine('batch_abc', {
      line_index: 1,
      custom_id: 'b',
      response: null,
      error: '{"code":"batch_cancelled","message":"m"}',
    });
    expect(isOutputLine(cancelled)).toBe(false);
  });
});

describe('failure decisions', () => {
  it('delays a 429 by retry-after without failing', () => {
    expect(decideFailure({ status: 429, retryAfter: 7 }, 9, 1_000)).toEqual({
      kind: 'delay',
      notBefore: 8_000,
    });
  });
  it('retries 5xx with exponential backoff, then fails', () => {
    expect(decideFailure({ status: 502 }, 1, 0)).toEqual({ kind: 'retry', notBefore: 1_000 });
    expect(decideFailure({ status: 503 }, 2, 0)).toEqual({ kind: 'retry', notBefore: 2_000 });
    expect(decideFailure({ status: 503 }, 3, 0)).toEqual({ kind: 'fail' });
  });
  it('fails a 400 at once', () => {
    expect(decideFailure({ status: 400 }, 1, 0)).toEqual({ kind: 'fail' });
  });
});

describe('fair order', () => {
  const candidates = [
    { batchId: 'b1', ownerKey: 'alice', createdAt: 1 },
    { batchId: 'b2', ownerKey: 'alice', createdAt: 2 },
    { batchId: 'b3', ownerKey: 'bob', createdAt: 3 },
  ];
  it('alternates owners before a second batch of the same owner', () => {
    expect(fairOrder(candidates)).toEqual(['b1', 'b3', 'b2']);
  });
  it('rotates the first owner across rounds', () => {
    expect(fairOrder(candidates, 'alice')).toEqual(['b3', 'b1', 'b2']);
    expect(fairOrder(candidates, 'bob')).toEqual(['b1', 'b3', 'b2']);
  });
  it('shares slots round-robin up to what each batch has ready', () => {
    const share = shareSlots(
      ['b1', 'b3', 'b2'],
      new Map([
        ['b1', 10],
        ['b3', 1],
        ['b2', 10],
      ]),
      5,
    );
    expect(Object.fromEntries(share)).toEqual({ b1: 2, b3: 1, b2: 2 });
  });
});
