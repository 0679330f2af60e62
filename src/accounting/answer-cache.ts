/**
 * Answers kept for a while and shared by concurrent callers (single flight): the first call for a key
 * computes, every call for that key until its answer expires gets the same promise. A failed
 * computation is forgotten at once, so the next call tries again. Expired entries are swept on each
 * call and the number of keys is capped, so callers naming many keys cannot grow it without bound.
 */
import type { Clock } from '../lib/clock.ts';

interface Entry<T> {
  answer: Promise<T>;
  /** Epoch ms; the answer is reused before it. */
  expiresAt: number;
}

export class AnswerCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly clock: Clock;
  private readonly maxEntries: number;

  constructor(options: { clock: Clock; maxEntries: number }) {
    this.clock = options.clock;
    this.maxEntries = options.maxEntries;
  }

  /** The answer for `key`: cached if computed less than `ttlMs` ago (or still running), else `compute()`'s. */
  get(key: string, ttlMs: number, compute: () => Promise<T>): Promise<T> {
    const now = this.clock.now();
    this.sweep(now);
    const cached = this.entries.get(key);
    if (cached) return cached.answer;
    const entry: Entry<T> = { answer: compute(), expiresAt: now + ttlMs };
    entry.answer.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, entry);
    return entry.answer;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}
