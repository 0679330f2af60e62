import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Caller } from '../canonical/caller.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ResponseCacheSettings } from '../config/config.ts';
import { createMetrics } from '../observability/metrics.ts';
import { MemorySharedStore } from '../store/shared/memory-shared-store.ts';
import { ResponseCache } from './response-cache.ts';

const caller = { kind: 'api_key', keyId: 'k1', teamId: 't1', cacheEnabled: null } as unknown as Caller;
const base: ResponseCacheSettings = {
  enabled: true,
  ttl_seconds: 60,
  max_entry_bytes: 1_000_000,
  scope: 'team',
  endpoints: ['chat'],
  extra_key_fields: [],
  ignored_key_fields: [],
};

function cacheWith(settings: Partial<ResponseCacheSettings> = {}): ResponseCache {
  return new ResponseCache({
    settings: { ...base, ...settings },
    store: new MemorySharedStore({ now: () => 0 }),
    metrics: createMetrics({ collectProcessMetrics: false }),
    logger: pino({ level: 'silent' }),
  });
}

const request = (extra: Record<string, unknown> = {}): ChatRequest =>
  ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra }) as ChatRequest;
const keyOf = (cache: ResponseCache, extra: Record<string, unknown> = {}) =>
  cache.plan(request(extra), caller, '/v1/chat/completions', undefined, false).key;

describe('the response cache key (cache version 7: every field but the unkeyed ones)', () => {
  it('leaves stream_options and metadata out by default, and nothing else', () => {
    const cache = cacheWith();
    expect(keyOf(cache, { metadata: { a: 1 }, stream_options: { include_usage: true } })).toBe(keyOf(cache));
    expect(keyOf(cache, { some_future_field: 1 })).not.toBe(keyOf(cache));
  });

  it('is independent of the order object keys were written in', () => {
    const cache = cacheWith();
    expect(keyOf(cache, { response_format: { type: 'json_schema', json_schema: { a: 1, b: 2 } } })).toBe(
      keyOf(cache, { response_format: { json_schema: { b: 2, a: 1 }, type: 'json_schema' } }),
    );
  });

  it('drops the fields ignored_key_fields names, and extra_key_fields puts a default-unkeyed one back', () => {
    const ignoring = cacheWith({ ignored_key_fields: ['user'] });
    expect(keyOf(ignoring, { user: 'a' })).toBe(keyOf(ignoring, { user: 'b' }));
    const keyingMetadata = cacheWith({ extra_key_fields: ['metadata'] });
    expect(keyOf(keyingMetadata, { metadata: { a: 1 } })).not.toBe(
      keyOf(keyingMetadata, { metadata: { a: 2 } }),
    );
  });

  it('hashes nothing when the cache is off', () => {
    const untouchable = request();
    Object.defineProperty(untouchable, 'messages', {
      enumerable: true,
      get() {
        throw new Error('read for a key');
      },
    });
    const plan = cacheWith({ enabled: false }).plan(
      untouchable,
      caller,
      '/v1/chat/completions',
      undefined,
      false,
    );
    expect([plan.status, plan.key]).toEqual(['bypass', undefined]);
  });

  it('clamps a per-request ttl to ttl_seconds and keeps a shorter one', () => {
    const cache = cacheWith();
    const ttlOf = (ttl: unknown) =>
      cache.plan(request({ cache: { ttl } }), caller, '/v1/chat/completions', undefined, false).ttlMs;
    expect([ttlOf(100_000), ttlOf(Number.POSITIVE_INFINITY), ttlOf(5), ttlOf(-1), ttlOf('9')]).toEqual([
      60_000, 60_000, 5_000, 60_000, 60_000,
    ]);
  });
});
