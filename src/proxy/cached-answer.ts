/**
 * Answers a request from a response-cache entry: the JSON answer at once, or the cached stream replayed
 * in its original chunks; either way the request's charge settles like a provider answer (outbox mode
 * included), with no provider call and no cost.
 */
import type { StreamChunk } from '../canonical/chat-chunk.ts';
import type { RequestCharge } from './request-charge.ts';
import { type CacheEntry, replayChunks, usageOfEntry } from './response-cache.ts';
import { SpendNotRecorded, settleOrFail, settleQuietly } from './settlement.ts';
import type { TextOutcome } from './text-pipeline.ts';

export interface CachedAnswerHooks {
  /** Settles a JSON answer as the pipeline does (outbox mode waits; may throw SpendNotRecorded). */
  settleAnswer(): Promise<void>;
  /** Records the request's metrics with its final status. */
  finish(status: number): void;
}

export async function answerFromCache(
  entry: CacheEntry,
  charge: RequestCharge,
  hooks: CachedAnswerHooks,
): Promise<TextOutcome> {
  charge.servedFromCache(usageOfEntry(entry));
  const meta = { deploymentId: 'cache', attempts: 0, headers: charge.headers };
  if (entry.kind === 'stream') return { kind: 'stream', chunks: replay(entry, charge, hooks), ...meta };
  try {
    await hooks.settleAnswer();
  } catch (error) {
    throw error instanceof SpendNotRecorded ? error.failure : error;
  }
  hooks.finish(200);
  return {
    kind: 'json',
    response: entry.response,
    ...(entry.json !== undefined ? { json: entry.json } : {}),
    ...(entry.native !== undefined ? { native: entry.native } : {}),
    ...meta,
  };
}

async function* replay(
  entry: Extract<CacheEntry, { kind: 'stream' }>,
  charge: RequestCharge,
  hooks: CachedAnswerHooks,
): AsyncGenerator<StreamChunk> {
  let ended = false;
  try {
    yield* replayChunks(entry);
    ended = true;
  } finally {
    if (!ended) {
      // The caller left during the replay.
      settleQuietly(charge, 499);
      hooks.finish(499);
    }
  }
  try {
    await settleOrFail(charge, 200, {});
  } catch (error) {
    const failure = error instanceof SpendNotRecorded ? error.failure : error;
    throw failure;
  }
  hooks.finish(200);
}
