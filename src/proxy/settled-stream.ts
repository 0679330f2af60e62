/**
 * The end of every streamed answer (text chunks, speech audio): pass the items through, and settle the
 * request's charge exactly once however the stream ends — completed (its usage charged, then settled
 * before the iterator completes, so a terminal marker follows accounting: spec rule 5), broken by the
 * upstream after content was sent (no retry: the failure is thrown for the caller's in-band error or
 * cut body), or left by the caller (the upstream call is stopped and the slot freed).
 */
import { upstreamFailure } from '../routing/upstream-failure.ts';
import { statusOf } from './request-admission.ts';
import type { RequestCharge } from './request-charge.ts';
import { SpendNotRecorded, settleOrFail, settleQuietly } from './settlement.ts';

export interface StreamSettlement<C> {
  model: string;
  charge: RequestCharge;
  /** Sees each item before the caller does (usage, the response cache's recorder). */
  onItem?(item: C): void;
  /** Charges the completed answer, before settlement. */
  complete(): void;
  /**
   * Whether the charge is complete even when the stream is not: speech is billed by the characters
   * sent, known before the first byte; a text answer cut short has unknown usage.
   */
  knownWhenCut?: boolean;
  /** Counts the request's end with its status. */
  finish(status: number): void;
}

/** The stream of `first` then `rest` (the router pulled the first item inside its attempt). */
export async function* prepend<C>(first: C, rest: AsyncIterator<C>): AsyncGenerator<C> {
  yield first;
  yield* { [Symbol.asyncIterator]: () => rest };
}

export async function* settledStream<C>(
  source: AsyncIterable<C>,
  settlement: StreamSettlement<C>,
): AsyncGenerator<C> {
  const { model, charge, onItem, finish } = settlement;
  const items = source[Symbol.asyncIterator]();
  const cut = () => {
    if (!settlement.knownWhenCut) charge.incomplete();
  };
  let ended = false;
  try {
    for (;;) {
      const next = await items.next();
      if (next.done) break;
      onItem?.(next.value);
      yield next.value;
    }
    ended = true;
  } catch (error) {
    ended = true;
    const failure = upstreamFailure(error, model);
    cut();
    settleQuietly(charge, failure.status);
    finish(failure.status);
    throw failure;
  } finally {
    if (!ended) {
      // The caller left mid-stream: stop the upstream call and free the slot.
      cut();
      settleQuietly(charge, 499);
      finish(499);
      await items.return?.();
    }
  }
  // In outbox mode a charge that is not durably accepted ends the stream with an error (spec rule 6).
  try {
    settlement.complete();
    await settleOrFail(charge, 200, {});
  } catch (error) {
    const failure = error instanceof SpendNotRecorded ? error.failure : error;
    finish(statusOf(failure));
    throw failure;
  }
  finish(200);
}
