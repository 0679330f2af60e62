/**
 * The per-tool policy limits that need the shared store, so they hold across processes and replicas:
 * `max_rpm` (fixed one-minute windows per API key and tool), `max_concurrency` (slots shared by the
 * policy's scope; each slot is a key with a TTL, so a crashed process cannot leak one) and the result
 * cache. When the shared store is down, fail_open uses per-process counters and fail_closed refuses.
 */
import type { Clock } from '../lib/clock.ts';
import { MemorySharedStore } from '../store/shared/memory-shared-store.ts';
import { type SharedStore, SharedStoreUnavailableError } from '../store/shared/shared-store.ts';
import { JsonRpcCode, JsonRpcError, rpcErrors } from './json-rpc-error.ts';

const MAX_CACHED_RESULT_BYTES = 1_048_576;

export interface ToolLimitsOptions {
  store: SharedStore;
  clock: Clock;
  degradedMode: 'fail_open' | 'fail_closed';
}

export type ReleaseSlot = () => Promise<void>;

export class ToolLimits {
  private readonly store: SharedStore;
  private readonly fallback: MemorySharedStore;
  private readonly clock: Clock;
  private readonly degradedMode: 'fail_open' | 'fail_closed';

  constructor(options: ToolLimitsOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.degradedMode = options.degradedMode;
    this.fallback = new MemorySharedStore(options.clock);
  }

  /** Counts this call in the caller's current minute; -32029 once the minute holds more than maxRpm. */
  async checkRate(toolName: string, counterKey: string, maxRpm: number): Promise<void> {
    const now = this.clock.now();
    const minute = Math.floor(now / 60_000);
    const count = await this.run((store) => store.increment(`mcp:rpm:${counterKey}:${minute}`, 1, 61_000));
    if (count > maxRpm) {
      const retryAfter = Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000));
      throw rpcErrors.rateLimited(
        toolName,
        `at most ${maxRpm} calls per minute; retry in ${retryAfter} s`,
        retryAfter,
      );
    }
  }

  /** Takes one of `maxConcurrency` slots for at most `holdMs`; -32029 when all are taken. */
  async acquireSlot(
    toolName: string,
    counterKey: string,
    maxConcurrency: number,
    holdMs: number,
  ): Promise<ReleaseSlot> {
    const token = `${process.pid}:${Math.random()}`;
    const start = Math.floor(Math.random() * maxConcurrency);
    for (let offset = 0; offset < maxConcurrency; offset++) {
      const key = `mcp:slot:${counterKey}:${(start + offset) % maxConcurrency}`;
      const taken = await this.run(async (store) => ({
        value: await store.setIfAbsent(key, token, holdMs),
        store,
      }));
      if (taken.value) {
        const store = taken.store;
        return async () => {
          // Only the holder frees its slot (a slot that outlived its TTL may belong to someone else now).
          if ((await store.get(key).catch(() => null)) === token) await store.delete(key).catch(() => {});
        };
      }
    }
    throw rpcErrors.rateLimited(
      toolName,
      `all ${maxConcurrency} concurrent slots are in use; retry shortly`,
      1,
    );
  }

  async cached(cacheKey: string): Promise<Record<string, unknown> | undefined> {
    try {
      const text = await this.store.get(`mcp:cache:${cacheKey}`);
      return text === null ? undefined : (JSON.parse(text) as Record<string, unknown>);
    } catch {
      return undefined; // a cache that cannot answer is a miss
    }
  }

  async remember(cacheKey: string, result: Record<string, unknown>, ttlSeconds: number): Promise<void> {
    const text = JSON.stringify(result);
    if (Buffer.byteLength(text) > MAX_CACHED_RESULT_BYTES) return;
    await this.store.set(`mcp:cache:${cacheKey}`, text, ttlSeconds * 1000).catch(() => {});
  }

  /** Runs against the shared store, degrading as configured when it is unavailable. */
  private async run<T>(command: (store: SharedStore) => Promise<T>): Promise<T> {
    try {
      return await command(this.store);
    } catch (error) {
      if (!(error instanceof SharedStoreUnavailableError)) throw error;
      if (this.degradedMode === 'fail_closed') {
        throw new JsonRpcError(
          JsonRpcCode.internalError,
          'Tool limits cannot be checked because the shared store is unavailable; retry shortly.',
        );
      }
      return command(this.fallback);
    }
  }
}
