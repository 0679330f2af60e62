/** SharedStore in process memory: the embedded default, and the per-process fallback of fail_open. */
import type { Clock } from '../../lib/clock.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import { MemoryResponseCache } from './memory-response-cache.ts';
import type { OutputRecorded, OutputRecording } from './output-counters.ts';
import type { AdmissionRequest, AdmissionResponse, SettlementRequest } from './rate-limit-counters.ts';
import { OutputCountersUnsupportedError, type SharedStore } from './shared-store.ts';

interface Entry {
  value: string;
  expiresAt: number;
}

export class MemorySharedStore implements SharedStore {
  readonly kind = 'memory' as const;
  private readonly clock: Clock;
  private readonly entries = new Map<string, Entry>();
  private readonly channels = new Map<string, Set<(message: string) => void>>();
  private sweepAt = 0;
  readonly rateLimiter: MemoryRateLimiter;
  private readonly responseCache: MemoryResponseCache;

  /** `responseCacheBytes`: the byte budget of the response cache (default 64 MiB). */
  constructor(clock: Clock, options: { responseCacheBytes?: number } = {}) {
    this.clock = clock;
    this.rateLimiter = new MemoryRateLimiter(clock);
    this.responseCache = new MemoryResponseCache(clock, options.responseCacheBytes);
  }

  async admit(request: AdmissionRequest): Promise<AdmissionResponse> {
    return this.rateLimiter.admit(request);
  }

  async settle(request: SettlementRequest): Promise<void> {
    this.rateLimiter.settle(request);
  }

  // Output policies need one shared, non-evicting store (spec output rule 10): no process-local twin.
  async recordOutput(_request: OutputRecording): Promise<OutputRecorded> {
    throw new OutputCountersUnsupportedError();
  }

  async markOutputUnknown(_keys: readonly string[]): Promise<void> {
    throw new OutputCountersUnsupportedError();
  }

  async ensureOutputEpoch(): Promise<boolean> {
    throw new OutputCountersUnsupportedError();
  }

  async time(): Promise<number> {
    return this.clock.now();
  }

  async ping(): Promise<void> {}

  isAvailable(): boolean {
    return true;
  }

  async get(key: string): Promise<string | null> {
    return this.live(key)?.value ?? null;
  }

  async getMany(keys: readonly string[]): Promise<Array<string | null>> {
    return keys.map((key) => this.live(key)?.value ?? null);
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.entries.set(key, { value, expiresAt: this.clock.now() + ttlMs });
    this.sweep();
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.live(key)) return false;
    await this.set(key, value, ttlMs);
    return true;
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async increment(key: string, amount: number, ttlMs: number): Promise<number> {
    const entry = this.live(key);
    if (entry) {
      const next = Number(entry.value) + amount;
      entry.value = String(next);
      return next;
    }
    await this.set(key, String(amount), ttlMs);
    return amount;
  }

  async incrementMany(
    counters: ReadonlyArray<{ key: string; amount: number }>,
    ttlMs: number,
  ): Promise<void> {
    for (const counter of counters) await this.increment(counter.key, counter.amount, ttlMs);
  }

  async cacheGet(key: string): Promise<string | undefined> {
    return this.responseCache.get(key);
  }

  async cacheSet(key: string, value: string, ttlMs: number): Promise<void> {
    this.responseCache.set(key, value, ttlMs);
  }

  async cacheDelete(pattern: string): Promise<number> {
    return this.responseCache.deleteMatching(pattern);
  }

  async publish(channel: string, message: string): Promise<void> {
    for (const handler of this.channels.get(channel) ?? []) queueMicrotask(() => handler(message));
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<void> {
    let handlers = this.channels.get(channel);
    if (!handlers) {
      handlers = new Set();
      this.channels.set(channel, handlers);
    }
    handlers.add(onMessage);
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.channels.clear();
    this.responseCache.clear();
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Drops expired entries now and then, so keys that are never read again do not pile up. */
  private sweep(): void {
    const now = this.clock.now();
    if (now < this.sweepAt) return;
    this.sweepAt = now + 10_000;
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}
