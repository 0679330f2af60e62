import { describe, expect, it } from 'vitest';
import { StoreClockOffset } from './store-clock-offset.ts';

describe('StoreClockOffset', () => {
  it('knows nothing before the first reply', () => {
    expect(new StoreClockOffset({ now: () => 1_000 }).storeTime()).toBeUndefined();
  });

  it('takes the middle of the first round trip, then stays within each later one', () => {
    let now = 1_000;
    const offset = new StoreClockOffset({ now: () => now });
    // Sent at 1000, answered at 1010; the store said 5005: the offset is in [3995, 4005].
    now = 1_010;
    offset.observe(5_005, 1_000);
    expect(offset.storeTime(2_000)).toBe(6_000);
    // A later round trip [2000, 2002] with store time 6003: offset in [4001, 4003].
    now = 2_002;
    offset.observe(6_003, 2_000);
    expect(offset.storeTime(3_000)).toBe(7_001);
  });

  it('follows a step of this clock at once (an hour back)', () => {
    let now = 10_000;
    const offset = new StoreClockOffset({ now: () => now });
    now = 10_002;
    offset.observe(10_001, 10_000);
    now = 10_002 - 3_600_000;
    offset.observe(10_003, now - 1, now);
    expect(offset.storeTime(now)).toBe(10_003);
  });
});
