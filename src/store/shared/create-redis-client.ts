/**
 * The ioredis connection every Redis store uses: fail fast (no offline queue, no retries of a command),
 * reconnect with a short back-off, auto-pipelining, and errors left to the commands that fail.
 */
import { Redis } from 'ioredis';

export function createRedisClient(
  url: string,
  overrides: { enableOfflineQueue?: boolean; autoResubscribe?: boolean } = {},
): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: overrides.enableOfflineQueue ?? false,
    autoResubscribe: overrides.autoResubscribe ?? true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1_000),
    enableAutoPipelining: true,
  });
  // Errors surface through failing commands and readiness; an unhandled 'error' event would crash.
  client.on('error', () => {});
  return client;
}
