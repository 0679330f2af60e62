import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChargesInFlight } from './charges-in-flight.ts';

describe('ChargesInFlight (what the shutdown flush waits for)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves true at once when nothing is in flight', async () => {
    await expect(new ChargesInFlight().settledBy(1_000)).resolves.toBe(true);
  });

  it('resolves true when the last charge is released, before its deadline', async () => {
    const charges = new ChargesInFlight();
    const first = charges.begin();
    const second = charges.begin();
    const settled = charges.settledBy(5_000);
    first();
    first(); // a second release of the same charge changes nothing
    expect(charges.size).toBe(1);
    second();
    await expect(settled).resolves.toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resolves false at its deadline while a charge stays open, holding no timer afterwards', async () => {
    const charges = new ChargesInFlight();
    charges.begin();
    const settled = charges.settledBy(1_500);
    await vi.advanceTimersByTimeAsync(499);
    let result: boolean | undefined;
    void settled.then((value) => {
      result = value;
    });
    await Promise.resolve();
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(result).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
