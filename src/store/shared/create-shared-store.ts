/**
 * The shared store a configuration asks for: Redis when `redis_url` is set (started even while Redis
 * is unreachable: readiness reports it and the client keeps reconnecting), else the in-memory store.
 */
import type { GeneralSettings } from '../../config/config.ts';
import type { Clock } from '../../lib/clock.ts';
import { MemorySharedStore } from './memory-shared-store.ts';
import { RedisSharedStore } from './redis-shared-store.ts';
import type { SharedStore } from './shared-store.ts';

export async function createSharedStore(
  general: Pick<GeneralSettings, 'redis_url' | 'redis_command_timeout_ms'>,
  options: {
    clock: Clock;
    /** Prepended to every key and channel. */
    prefix: string;
    /** Told when Redis does not answer within 2 s of the start. */
    warn: (message: string) => void;
    /** Rate-limit time for Redis (tests); by default the Redis server's own clock. */
    storeClock?: Clock;
  },
): Promise<SharedStore> {
  if (!general.redis_url) return new MemorySharedStore(options.clock);
  const store = new RedisSharedStore({
    url: general.redis_url,
    prefix: options.prefix,
    commandTimeoutMs: general.redis_command_timeout_ms,
    ...(options.storeClock ? { clock: options.storeClock } : {}),
  });
  if (!(await store.waitUntilReady(2_000))) {
    options.warn('Redis is not reachable yet; readiness reports it and the gateway keeps reconnecting');
  }
  return store;
}
