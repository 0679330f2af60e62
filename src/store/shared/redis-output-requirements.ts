/**
 * What output-token governance needs to know about the Redis server behind the shared store (spec
 * output rule 10): its eviction policy (CONFIG GET, or INFO memory where CONFIG is renamed or disabled),
 * whether it runs in cluster mode, and whether it is a primary. Read-only commands only.
 */
import type { Redis } from 'ioredis';
import { withTimeout } from './store-timeout.ts';

export interface RedisServerFacts {
  /** `noeviction`, `allkeys-lru` … (CONFIG GET, else INFO); undefined when neither says. */
  maxmemoryPolicy: string | undefined;
  cluster: boolean;
  /** `master` or `slave` (INFO replication role). */
  role: string | undefined;
}

/** Reads the facts; rejects when the server does not answer (the caller decides what that means). */
export async function readRedisServerFacts(client: Redis, timeoutMs: number): Promise<RedisServerFacts> {
  const info = await withTimeout(client.info(), timeoutMs);
  const fields = parseInfo(info);
  let maxmemoryPolicy: string | undefined;
  try {
    const reply = (await withTimeout(client.config('GET', 'maxmemory-policy'), timeoutMs)) as string[];
    maxmemoryPolicy = reply[1] || undefined;
  } catch {
    // CONFIG renamed or disabled (managed Redis often does this): INFO memory says the same.
  }
  maxmemoryPolicy ??= fields.get('maxmemory_policy') || undefined;
  return {
    maxmemoryPolicy,
    cluster: fields.get('cluster_enabled') === '1' || fields.get('redis_mode') === 'cluster',
    role: fields.get('role'),
  };
}

function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}
