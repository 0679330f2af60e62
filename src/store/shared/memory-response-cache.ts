/** The in-process response cache: an LRU bounded in total bytes whose entries expire by the injected Clock. */
import type { Clock } from '../../lib/clock.ts';
import { globMatch } from './glob-match.ts';

/** The default byte budget of the in-process response cache. */
export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;

interface Entry {
  value: string;
  expiresAt: number;
  bytes: number;
}

export class MemoryResponseCache {
  private readonly clock: Clock;
  private readonly maxBytes: number;
  /** Insertion order is recency order: a read moves its entry to the end, eviction takes the front. */
  private readonly entries = new Map<string, Entry>();
  private totalBytes = 0;

  constructor(clock: Clock, maxBytes = DEFAULT_RESPONSE_CACHE_BYTES) {
    this.clock = clock;
    this.maxBytes = maxBytes;
  }

  /** Bytes held now: the UTF-8 length of every key and value. */
  get bytes(): number {
    return this.totalBytes;
  }

  get(key: string): string | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.clock.now()) {
      this.totalBytes -= entry.bytes;
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Stores the entry as the most recent one and evicts the least recently used until within budget. */
  set(key: string, value: string, ttlMs: number): void {
    this.remove(key);
    const bytes = Buffer.byteLength(key) + Buffer.byteLength(value);
    // An entry larger than the whole budget would only empty the cache and then be evicted itself.
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { value, expiresAt: this.clock.now() + ttlMs, bytes });
    this.totalBytes += bytes;
    for (const oldest of this.entries.keys()) {
      if (this.totalBytes <= this.maxBytes) break;
      this.remove(oldest);
    }
  }

  /** Deletes the entries whose key matches the `*` glob; returns how many were live. */
  deleteMatching(pattern: string): number {
    const now = this.clock.now();
    let deleted = 0;
    for (const [key, entry] of this.entries) {
      if (!globMatch(pattern, key)) continue;
      if (entry.expiresAt > now) deleted++;
      this.remove(key);
    }
    return deleted;
  }

  clear(): void {
    this.entries.clear();
    this.totalBytes = 0;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.totalBytes -= entry.bytes;
  }
}
