/**
 * The end of every streamed answer (text chunks, speech audio): pass the items through, and settle the
 * request's charge exactly once however the stream ends — completed (its usage charged, then settled
 * before the iterator completes, so a terminal marker follows accounting: spec rule 5), broken by the
 * upstream after content was sent (no retry: the failure is thrown for the caller's in-band error or
 * cut body), or left by the caller. A text stream the caller left is read on, unseen, for at most the
 * drain time so its usage report is charged (else an estimate); other streams stop their upstream call.
 */
import { upstreamFailure } from '../routing/upstream-failure.ts';
import { statusOf } from './request-admission.ts';
import type { RequestCharge } from './request-charge.ts';
import { SpendNotRecorded, settleOrFail, settleQuietly } from './settlement.ts';
import type { UpstreamSignal } from './upstream-signal.ts';

export interface StreamSettlement<C> {
  model: string;
  charge: RequestCharge;
  /** Sees each item before the caller does (usage, the response cache's recorder), and while draining. */
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
  /** A text stream's upstream call that outlives a caller who left, and how that caller is charged. */
  drain?: StreamDrain;
}

export interface StreamDrain {
  upstream: UpstreamSignal;
  /** Charges the call of a caller who left: its usage report when one was read, else the estimate. */
  chargeLeft(): void;
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
  const { model, charge, onItem, finish, drain } = settlement;
  const items = source[Symbol.asyncIterator]();
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
    // After the caller left, the drain's deadline (or the upstream) ended the call: nobody reads this.
    if (drain?.upstream.callerLeft) {
      settleLeft(settlement, drain);
      throw upstreamFailure(error, model);
    }
    drain?.upstream.end();
    const failure = upstreamFailure(error, model);
    if (!settlement.knownWhenCut) charge.incomplete();
    settleQuietly(charge, failure.status);
    finish(failure.status);
    throw failure;
  } finally {
    if (!ended) {
      if (drain) {
        // The caller left mid-stream: read on for the usage report, off the caller's path. It
        // settles in every case (settleLeft's finally); a throw of our own code ends only the reading.
        void drainForUsage(items, settlement, drain).catch(() => {});
      } else {
        // Stop the upstream call and free the slot.
        if (!settlement.knownWhenCut) charge.incomplete();
        settleQuietly(charge, 499);
        finish(499);
        await items.return?.();
      }
    }
  }
  drain?.upstream.end();
  // Complete, though its caller may have left while the last chunks came (nothing told the writer yet).
  const status = drain?.upstream.callerLeft ? 499 : 200;
  // In outbox mode a charge that is not durably accepted ends the stream with an error (spec rule 6).
  try {
    settlement.complete();
    await settleOrFail(charge, status, {});
  } catch (error) {
    const failure = error instanceof SpendNotRecorded ? error.failure : error;
    finish(statusOf(failure));
    throw failure;
  }
  finish(status);
}

/**
 * Reads what is left of a stream whose caller is gone, unseen, until it ends or the drain's deadline
 * aborts it, then charges it (status 499). Never rejects: every failure only ends the reading.
 */
async function drainForUsage<C>(
  items: AsyncIterator<C>,
  settlement: StreamSettlement<C>,
  drain: StreamDrain,
): Promise<void> {
  drain.upstream.startDrain();
  try {
    for (;;) {
      const next = await items.next();
      if (next.done) break;
      settlement.onItem?.(next.value);
    }
  } catch {
    // Aborted at the deadline, or the upstream broke: the usage read so far decides.
  }
  await Promise.resolve(items.return?.()).catch(() => {});
  settleLeft(settlement, drain);
}

/** Charges a call whose caller is gone: 499, or 503 for a stream a shutdown cut (its `not_ready` event). */
function settleLeft<C>(settlement: StreamSettlement<C>, drain: StreamDrain): void {
  const status = drain.upstream.cutByShutdown ? 503 : 499;
  drain.upstream.end();
  try {
    drain.chargeLeft();
  } finally {
    settleQuietly(settlement.charge, status);
    settlement.finish(status);
  }
}
