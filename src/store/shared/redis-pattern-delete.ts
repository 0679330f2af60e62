/** Pattern deletion on Redis: SCAN MATCH and UNLINK in batches (never KEYS, which blocks the server). */
import type { Redis } from 'ioredis';

/** Keys asked of each SCAN step; each step and each UNLINK is one short command. */
const SCAN_COUNT = 1_000;

/** Escapes Redis glob syntax (`*?[]\`) so every character of `text` matches only itself. */
export function escapeRedisGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** A MATCH pattern: `prefix` literally, then `pattern` whose `*` stays a wildcard and all else is literal. */
export function redisMatchPattern(prefix: string, pattern: string): string {
  return escapeRedisGlob(prefix) + pattern.split('*').map(escapeRedisGlob).join('*');
}

/**
 * Unlinks every key matching `match`; returns how many existed. SCAN may return a key twice while the
 * keyspace is rehashed: UNLINK counts only keys it removed, so the total stays exact.
 */
export async function unlinkMatching(
  client: Redis,
  match: string,
  run: <T>(command: () => Promise<T>) => Promise<T>,
): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await run(() => client.scan(cursor, 'MATCH', match, 'COUNT', SCAN_COUNT));
    cursor = next;
    if (keys.length > 0) deleted += await run(() => client.unlink(...keys));
  } while (cursor !== '0');
  return deleted;
}
