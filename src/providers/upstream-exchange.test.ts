/**
 * The stream deadlines of withFirstChunkDeadline: once a stream has started, `stream_timeout` bounds the
 * silence between counted items, not between bytes (issue 18: an upstream dripping one line that never
 * ends held a started stream and its caller's slot for as long as it liked), while a caller that reads
 * slowly is not mistaken for a silent upstream.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { DeploymentSettings } from './provider-adapter.ts';
import type { UpstreamResponse } from './send-upstream.ts';
import { UpstreamError } from './upstream-error.ts';
import { withFirstChunkDeadline } from './upstream-exchange.ts';

const IDLE_MS = 100;

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
    const started = performance.now();
    const seen: boolean[] = [];
    const read = async () => {
      for await (const counted of exchange((index) =>
        index === 0 ? { counted: true, afterMs: 0 } : 'silent',
      ))
        seen.push(counted);
    };
    const error = await read().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).kind).toBe('timeout');
    expect(seen).toEqual([true]);
    // Bounded by the idle timeout (100 ms) plus scheduling; the upstream itself never stops.
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('keeps a started stream alive on ping events (complete, uncounted items) more often than stream_timeout', async () => {
    let count = 0;
    const produce = (index: number) =>
      index < 12 ? { counted: index === 0, afterMs: IDLE_MS / 2 } : undefined;
    for await (const _ of exchange(produce)) count++;
    expect(count).toBe(12);
  });

  it('keeps a stream whose counted items come more often than stream_timeout, however long it lasts', async () => {
    let count = 0;
    for await (const _ of exchange((index) =>
      index < 12 ? { counted: true, afterMs: IDLE_MS / 2 } : undefined,
    ))
      count++;
    expect(count).toBe(12); // 600 ms in all, six times the idle timeout
  });

  it('does not count the time the caller takes to read an item as upstream silence', async () => {
    let count = 0;
    for await (const _ of exchange((index) => (index < 3 ? { counted: true, afterMs: 0 } : undefined))) {
      count++;
      await delay(IDLE_MS * 2); // a slow caller: back-pressure, not a silent upstream
    }
    expect(count).toBe(3);
  });
});
