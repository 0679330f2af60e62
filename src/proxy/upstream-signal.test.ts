import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StreamCutByShutdown, UpstreamSignal } from './upstream-signal.ts';

describe('UpstreamSignal (the upstream call of a caller who may leave)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts at once when the caller leaves before content went out', () => {
    const caller = new AbortController();
    const upstream = new UpstreamSignal(caller.signal, 3000);
    caller.abort();
    expect(upstream.signal.aborted).toBe(true);
  });

  it('outlives a caller who left after content by the drain time, then aborts', () => {
    const caller = new AbortController();
    const upstream = new UpstreamSignal(caller.signal, 3000);
    upstream.outliveCaller();
    caller.abort();
    expect(upstream.callerLeft).toBe(true);
    vi.advanceTimersByTime(2999);
    expect(upstream.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(upstream.signal.aborted).toBe(true);
  });

  it('bounds a drain that starts without the caller leaving (a stream cut by shutdown)', () => {
    const upstream = new UpstreamSignal(new AbortController().signal, 500);
    upstream.outliveCaller();
    upstream.startDrain();
    vi.advanceTimersByTime(500);
    expect(upstream.signal.aborted).toBe(true);
  });

  it('aborts at once, without the drain, when a shutdown cut the stream (charged before the process exits)', () => {
    const caller = new AbortController();
    const upstream = new UpstreamSignal(caller.signal, 3000);
    upstream.outliveCaller();
    caller.abort(new StreamCutByShutdown());
    expect(upstream.signal.aborted).toBe(true);
    expect(upstream.cutByShutdown).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('holds nothing once the call ended: no timer, no abort later', () => {
    const caller = new AbortController();
    const upstream = new UpstreamSignal(caller.signal, 100);
    upstream.outliveCaller();
    upstream.end();
    caller.abort();
    vi.advanceTimersByTime(1000);
    expect(upstream.signal.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
