import type { OutputRecorded, OutputRecording } from './output-counters.ts';
import type { AdmissionRequest, AdmissionResponse, SettlementRequest } from './rate-limit-counters.ts';

/**
 * The store shared by every gateway process: counters, short-lived values and pub/sub for cache
 * invalidation. Redis in production; an in-memory implementation for the embedded default and for
 * fail_open degradation. Both pass the same conformance suite (test/support/shared-store-suite.ts).
 */
export interface SharedStore {
  readonly kind: 'redis' | 'memory';
  /** The store's own clock in epoch milliseconds (Redis TIME), so all replicas agree on windows. */
  time(): Promise<number>;
  /** Resolves when the store answers; rejects with SharedStoreUnavailableError otherwise. */
  ping(): Promise<void>;
  /** False while the store is known to be unreachable (commands would fail fast). */
  isAvailable(): boolean;
  get(key: string): Promise<string | null>;
  /** The values of several keys in one round trip, in their order (null where absent). */
  getMany(keys: readonly string[]): Promise<Array<string | null>>;
  /** Sets a value that expires after `ttlMs`. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /** Sets the value only when the key is absent; true when it was set. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Adds `amount` to a counter, starting its expiry when the counter is created; returns the new value. */
  increment(key: string, amount: number, ttlMs: number): Promise<number>;
  /** `increment` of several counters in one round trip (one script on Redis); nothing is returned. */
  incrementMany(counters: ReadonlyArray<{ key: string; amount: number }>, ttlMs: number): Promise<void>;
  publish(channel: string, message: string): Promise<void>;
  /**
   * Calls `onMessage` for each message on `channel`, and `onResync` whenever messages may have been missed
   * (after the subscription is re-established), so caches can drop everything they hold.
   */
  subscribe(channel: string, onMessage: (message: string) => void, onResync: () => void): Promise<void>;
  /**
   * Atomically validates every counter, the slot and the budgets (with their reservations in flight),
   * and increments, leases and reserves only when all pass. Past `deadline` it changes nothing.
   */
  admit(request: AdmissionRequest): Promise<AdmissionResponse>;
  /** Corrects counters (never below zero), charges budgets, ends and renews leases, in one round trip. */
  settle(request: SettlementRequest): Promise<void>;
  /**
   * Output-token governance (output-counters.ts), Redis only: the memory store rejects these with
   * OutputCountersUnsupportedError, because output policies need one shared, non-evicting store.
   * Adds one attempt's output to each counter in the store's current minute, once per receipt.
   */
  recordOutput(request: OutputRecording): Promise<OutputRecorded>;
  /** Marks each counter's usage unknown for the store's current minute. */
  markOutputUnknown(keys: readonly string[]): Promise<void>;
  /**
   * Creates the store epoch marker when it is absent, paused until the store's next minute (nothing
   * vouches for writes before it); true when it was created.
   */
  ensureOutputEpoch(): Promise<boolean>;
  /**
   * Response cache (keys from response-cache-keys.ts). A cached answer, or undefined on a miss; throws
   * SharedStoreUnavailableError when Redis is down. The memory store keeps entries in a byte-bounded LRU.
   */
  cacheGet(key: string): Promise<string | undefined>;
  /** Stores `value` for `ttlMs` (milliseconds, > 0). */
  cacheSet(key: string, value: string, ttlMs: number): Promise<void>;
  /**
   * Deletes every cache entry whose key matches `pattern` (glob: `*` matches any run of characters;
   * every other character is literal) and returns how many. Redis: SCAN MATCH + UNLINK in batches.
   */
  cacheDelete(pattern: string): Promise<number>;
  close(): Promise<void>;
}

/** Output-token counters asked of a store that cannot keep them (the in-memory one). */
export class OutputCountersUnsupportedError extends Error {
  constructor() {
    super('output-token counters need the shared Redis store (general_settings.redis_url)');
    this.name = 'OutputCountersUnsupportedError';
  }
}

/**
 * Why the store did not answer: `disconnected` (no connection, or it broke), `silent` (nothing at all
 * came back from the store since the command was sent: it hangs), `slow` (the timeout passed while
 * other replies kept arriving: slow, not down), `late` (the command reached the store after its
 * deadline and changed nothing).
 */
export type StoreFailure = 'disconnected' | 'silent' | 'slow' | 'late';

/** The store did not answer in time or is disconnected. */
export class SharedStoreUnavailableError extends Error {
  readonly failure: StoreFailure;

  constructor(reason: string, failure: StoreFailure = 'disconnected') {
    super(`shared store unavailable: ${reason}`);
    this.name = 'SharedStoreUnavailableError';
    this.failure = failure;
  }
}
