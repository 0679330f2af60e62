/**
 * The response cache's settings with their defaults, and which request fields its key leaves out
 * (docs/cache.md): every field sent upstream is hashed except the fixed and the default-unkeyed ones,
 * `ignored_key_fields` leaves out more and `extra_key_fields` puts a default-unkeyed one back in.
 */
import type { ResponseCacheSettings } from './config.ts';
import type { ConfigFile } from './config-schema.ts';

/**
 * Never hashed as fields: `model` is the key's model segment, `stream` is hashed as the entry's kind
 * (a JSON answer or a stream), and `cache` is the cache's own per-request control, never sent upstream.
 */
export const RESPONSE_CACHE_FIXED_FIELDS: readonly string[] = ['model', 'stream', 'cache'];

/**
 * Left out by default because they never change the answer: `stream_options` only says whether the
 * caller sees the usage chunk (the gateway asks every upstream for it and each caller's encoder decides),
 * and `metadata` is the caller's tags for the provider's logs and dashboard.
 */
export const RESPONSE_CACHE_UNKEYED_FIELDS: readonly string[] = ['stream_options', 'metadata'];

type ResponseCacheFile = NonNullable<NonNullable<ConfigFile['general_settings']>['response_cache']>;

const PATH = 'general_settings.response_cache';

export function responseCacheSettings(
  file: ResponseCacheFile | undefined,
  issues: string[],
  warnings: string[],
): ResponseCacheSettings {
  const extra = file?.extra_key_fields ?? [];
  const ignored = file?.ignored_key_fields ?? [];
  checkKeyFields(extra, ignored, issues, warnings);
  return {
    enabled: file?.enabled ?? false,
    ttl_seconds: file?.ttl_seconds ?? 600,
    max_entry_bytes: file?.max_entry_bytes ?? 1_048_576,
    scope: file?.scope ?? 'team',
    endpoints: file?.endpoints ?? ['chat', 'completions', 'responses', 'messages'],
    extra_key_fields: extra,
    ignored_key_fields: ignored,
  };
}

/**
 * A list entry that would change nothing is refused (a fixed field, or one field in both lists) or,
 * where older files had it with a meaning, warned about: before cache version 7 only ten fields were
 * hashed, so `extra_key_fields: [presence_penalty]` was needed; now it is hashed anyway.
 */
function checkKeyFields(
  extra: readonly string[],
  ignored: readonly string[],
  issues: string[],
  warnings: string[],
): void {
  extra.forEach((field, index) => {
    const path = `${PATH}.extra_key_fields[${index}]`;
    if (RESPONSE_CACHE_FIXED_FIELDS.includes(field)) issues.push(`${path}: ${fixedReason(field)}`);
    else if (ignored.includes(field))
      issues.push(`${path}: '${field}' is also in ignored_key_fields; name it in one list only`);
    else if (!RESPONSE_CACHE_UNKEYED_FIELDS.includes(field))
      warnings.push(
        `${path}: '${field}' is part of the cache key already (every request field is, except ${RESPONSE_CACHE_UNKEYED_FIELDS.join(' and ')}); remove it`,
      );
  });
  ignored.forEach((field, index) => {
    const path = `${PATH}.ignored_key_fields[${index}]`;
    if (RESPONSE_CACHE_FIXED_FIELDS.includes(field)) issues.push(`${path}: ${fixedReason(field)}`);
    else if (RESPONSE_CACHE_UNKEYED_FIELDS.includes(field))
      warnings.push(`${path}: '${field}' is left out of the cache key by default; remove it`);
  });
}

function fixedReason(field: string): string {
  return field === 'cache'
    ? `'cache' is the per-request cache control and never part of the key`
    : `'${field}' is always part of the key (the ${field === 'model' ? "key's model segment" : "answer's kind: JSON or stream"})`;
}
