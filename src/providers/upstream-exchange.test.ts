/**
 * The stream deadlines of withFirstChunkDeadline: once a stream has started, `stream_timeout` bounds the
 * silence between counted items, not between bytes (issue 18: an upstream dripping one line that never
 * ends held a started stream and its caller's slot for as long as it liked), while a caller that reads
 * slowly is not mistaken for a silent upstream.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DeploymentSettings } from './provider-adapter.ts';
import type { UpstreamResponse } from './send-upstream.ts';
import { UpstreamError } from './upstream-error.ts';
import { withFirstChunkDeadline } from './upstream-exchange.ts';

const IDLE_MS = 100;

// The deadlines are timers, so the tests run on vitest's fake timers and move time by hand: what they
// check is which timer fires and when in stream time, never how fast the machine happens to be.
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A pause on the (fake) timers; node:timers/promises is not faked, so the global setTimeout is used. */
const delay = (milliseconds: number) => new Promise<void>((resolve) => setTimeout(resolve, milliseconds));

/** Reads `stream` to its end or error while the test moves the fake clock; resolves with what it saw. */
function drain<T>(stream: AsyncIterable<T>, onItem: (item: T) => Promise<void> | void = () => {}) {
  const seen: T[] = [];
  const outcome = (async () => {
    for await (const item of stream) {
      seen.push(item);
      await onItem(item);
    }
  })().then(
    () => ({ settled: true, error: undefined as unknown }),
    (error: unknown) => ({ settled: true, error }),
  );
  let settled = false;
  void outcome.then(() => {
    settled = true;
  });
  return { seen, outcome, settled: () => settled };
}

const settings: DeploymentSettings = {
  model: 'm',
  params: {},
  timeouts: { connectMs: 1_000, headersMs: 1_000, streamIdleMs: IDLE_MS, totalMs: 1_000, poolMs: 1_000 },
  maxConnections: 1,
};

/**
 * Items from `produce` (`undefined` ends the stream, `'silent'` sends bytes that complete no item, as a
 * dripping endless line does), ended by the error the deadline passes to `abort`, as a real exchange does.
 */
function exchange(produce: (index: number) => { counted: boolean; afterMs: number } | 'silent' | undefined) {
  let fail!: (error: Error) => void;
  const aborted = new Promise<never>((_, reject) => {
    fail = reject;
  });
  aborted.catch(() => undefined);
  const response = { abort: (error: Error) => fail(error) } as unknown as UpstreamResponse;
  async function* items() {
    for (let index = 0; ; index++) {
      const next = produce(index);
      if (!next) return;
      if (next === 'silent') await aborted;
      else {
        await Promise.race([delay(next.afterMs), aborted]);
        yield next.counted;
      }
    }
  }
  return withFirstChunkDeadline(
    response,
    settings,
    { signal: new AbortController().signal, requestId: 'r' },
    items(),
    (counted) => counted,
  );
}

describe('withFirstChunkDeadline once the stream has started', () => {
  it('ends a started stream whose upstream completes no further item (an endless line) after stream_timeout', async () => {
    const read = drain(exchange((index) => (index === 0 ? { counted: true, afterMs: 0 } : 'silent')));
    // One tick short of stream_timeout the stream is still open; at stream_timeout it ends, long before
    // the request's total deadline (1 000 ms) could have been what ended it. The upstream never stops.
    await vi.advanceTimersByTimeAsync(IDLE_MS - 1);
    expect(read.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(read.settled()).toBe(true);
    const { error } = await read.outcome;
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).kind).toBe('timeout');
    expect(read.seen).toEqual([true]);
  });

  it('keeps a started stream alive on ping events (complete, uncounted items) more often than stream_timeout', async () => {
    const read = drain(
      exchange((index) => (index < 12 ? { counted: index === 0, afterMs: IDLE_MS / 2 } : undefined)),
    );
    await vi.runAllTimersAsync(); // until no timer is left: an idle abort would have fired on the way
    expect(await read.outcome).toEqual({ settled: true, error: undefined });
    expect(read.seen).toHaveLength(12);
  });

  it('keeps a stream whose counted items come more often than stream_timeout, however long it lasts', async () => {
    const read = drain(
      exchange((index) => (index < 12 ? { counted: true, afterMs: IDLE_MS / 2 } : undefined)),
    );
    await vi.runAllTimersAsync(); // 600 ms of stream time in all, six times the idle timeout
    expect(await read.outcome).toEqual({ settled: true, error: undefined });
    expect(read.seen).toHaveLength(12);
  });

  it('does not count the time the caller takes to read an item as upstream silence', async () => {
    // A slow caller (twice stream_timeout per item): back-pressure, not a silent upstream.
    const read = drain(
      exchange((index) => (index < 3 ? { counted: true, afterMs: 0 } : undefined)),
      () => delay(IDLE_MS * 2),
    );
    await vi.runAllTimersAsync(); // until no timer is left: an idle abort would have fired on the way
    expect(await read.outcome).toEqual({ settled: true, error: undefined });
    expect(read.seen).toHaveLength(3);
  });
});
