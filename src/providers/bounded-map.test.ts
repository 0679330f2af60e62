/** Bounded concurrent upstream calls: results in item order, a cap on calls in flight, the first failure wins. */
import { describe, expect, it } from 'vitest';
import { mapBounded } from './bounded-map.ts';

/** A promise settled from outside, so the test decides the order in which calls finish. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

describe('mapBounded', () => {
  it('keeps item order whatever order the calls finish in, with at most `limit` in flight', async () => {
    const calls = Array.from({ length: 5 }, () => deferred<string>());
    let inFlight = 0;
    let most = 0;
    const pending = mapBounded([0, 1, 2, 3, 4], 2, new AbortController().signal, async (item) => {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        return await calls[item]!.promise;
      } finally {
        inFlight--;
      }
    });
    for (const item of [1, 0, 3, 2, 4]) {
      calls[item]!.resolve(`r${item}`);
      await Promise.resolve();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await pending).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(most).toBe(2);
  });

  it('throws the first failure, aborts the calls still running and starts no more', async () => {
    const started: number[] = [];
    const aborted: number[] = [];
    const first = deferred<string>();
    const pending = mapBounded([0, 1, 2, 3], 2, new AbortController().signal, (item, _index, signal) => {
      started.push(item);
      if (item === 0) return first.promise;
      return new Promise<string>((_, reject) =>
        signal.addEventListener('abort', () => {
          aborted.push(item);
          reject(new Error(`aborted ${item}`));
        }),
      );
    });
    first.reject(new Error('upstream failed'));
    await expect(pending).rejects.toThrow('upstream failed');
    expect(started).toEqual([0, 1]);
    expect(aborted).toEqual([1]);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('caller left'));
    let calls = 0;
    await expect(
      mapBounded([1, 2], 2, controller.signal, async () => {
        calls++;
        return 1;
      }),
    ).rejects.toThrow('caller left');
    expect(calls).toBe(0);
  });
});
