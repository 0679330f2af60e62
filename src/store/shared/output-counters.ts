/**
 * Output-token counters (spec: Limits > Output tokens per minute): the shapes of their admission reads
 * and recordings, and the key layout both the Redis scripts and their callers agree on. A counter
 * belongs to a fixed UTC minute chosen by the store's clock when output is recorded: its key is
 * `<base>:<minute index>`, the unknown-usage marker of that minute `<base>:u:<minute index>`.
 */
import { createHash } from 'node:crypto';

/** Counters saturate here (spec rule 10) instead of growing without bound. */
export const OUTPUT_COUNTER_MAX = 2_147_483_647;
/** Buckets and unknown markers live until 30 s after their minute ends. */
export const OUTPUT_BUCKET_GRACE_MS = 30_000;
/** A recording's receipt lives 120 s after accounting, so a retried write never counts twice. */
export const OUTPUT_RECEIPT_TTL_MS = 120_000;
/** Longest stored key, prefix included (a receipt record is `<minute>:<amount>`, far below its 4 KiB). */
export const OUTPUT_MAX_KEY_BYTES = 512;
/** The store epoch marker (no expiry): its loss means acknowledged writes may be lost. */
export const OUTPUT_EPOCH_KEY = 'ot:epoch';
export const OUTPUT_MINUTE_MS = 60_000;

// The longest suffix a base gets: `:u:` and a minute index (ten digits last until the year 20984).
const MAX_SUFFIX_BYTES = 13;

/**
 * The base key of an output counter: `ot:<scope>:<id>` for a scalar limit, `ot:<scope>:<id>:m:<model>`
 * for a per-model limit. A model id is up to 256 UTF-8 bytes (tripled by encoding), so the store
 * bounds the key it writes with storedOutputBase.
 */
export function outputCounterBase(scope: string, id: string, model?: string): string {
  return model === undefined
    ? `ot:${scope}:${encodeURIComponent(id)}`
    : `ot:${scope}:${encodeURIComponent(id)}:m:${encodeURIComponent(model)}`;
}

/**
 * The base as stored under `prefix`: itself, or `ot:<scope>:h:<sha-256 of the base>` when the prefix,
 * the base and the longest suffix would pass OUTPUT_MAX_KEY_BYTES. Counted in bytes: a prefix of 64
 * characters may take 256 (it is any UTF-8 text).
 */
export function storedOutputBase(prefix: string, base: string): string {
  if (Buffer.byteLength(prefix) + Buffer.byteLength(base) + MAX_SUFFIX_BYTES <= OUTPUT_MAX_KEY_BYTES)
    return base;
  const scope = base.split(':', 2)[1];
  return `ot:${scope}:h:${createHash('sha256').update(base).digest('hex')}`;
}

/** The UTC minute index (minutes since the epoch) of a store time. */
export function outputMinute(now: number): number {
  return Math.floor(now / OUTPUT_MINUTE_MS);
}

export function outputBucketKey(base: string, minute: number): string {
  return `${base}:${minute}`;
}

export function outputUnknownKey(base: string, minute: number): string {
  return `${base}:u:${minute}`;
}

/** One output counter read at admission: recorded usage at or above `limit` refuses the request. */
export interface OutputCheck {
  key: string;
  limit: number;
}

/** Why admission refused a governed request on its output counters. */
export type OutputRefusal =
  /** Recorded output at or above the limit of check `index`. */
  | { state: 'exceeded'; index: number; recorded: number }
  /** Check `index` has an unknown-usage marker for this minute. */
  | { state: 'unknown'; index: number }
  /** The epoch marker was lost (flush, restore, failover): paused until the minute `until` starts. */
  | { state: 'unavailable'; until: number };

/** Adds one provider attempt's output to every counter, in the store's current minute. */
export interface OutputRecording {
  keys: readonly string[];
  /** Output tokens, > 0. */
  amount: number;
  /** Identifies this attempt's write; a retry with the same receipt is not counted again. */
  receipt: string;
}

/** An epoch and a write sequence in it: each recording advances the sequence of the live epoch. */
export interface OutputEpochMark {
  id: string;
  seq: number;
}

export interface OutputRecorded {
  /** The store's clock, epoch ms, and the minute the output went into. */
  now: number;
  minute: number;
  /** Each counter after the recording (or, for a duplicate, as it is now). */
  counts: number[];
  /** Per counter: its usage is marked unknown for that minute (by this request or another). */
  unknown: boolean[];
  /** True when a counter hit OUTPUT_COUNTER_MAX. */
  saturated: boolean;
  /** True when the receipt was already there: this write had been applied before. */
  duplicate: boolean;
  /** The epoch and sequence this write reached; absent for a duplicate or while no live epoch exists. */
  epoch?: OutputEpochMark;
}

/** The store key of a recording's receipt. */
export function outputReceiptKey(receipt: string): string {
  return `ot:r:${receipt}`;
}
