import { describe, expect, it } from 'vitest';
import { ConnectionShare, ConnectionShareExhausted } from './connection-share.ts';

describe('connection share per API key', () => {
  it('gives a key its share at once, queues as many more, refuses beyond, and never touches other keys', async () => {
    const share = new ConnectionShare({ perKey: 2, waitMs: 60_000 });
    const held = [await share.acquire('a'), await share.acquire('a')];
    const queued = [share.acquire('a'), share.acquire('a')];
    await expect(share.acquire('a')).rejects.toBeInstanceOf(ConnectionShareExhausted);
    expect(share.usage('a')).toEqual({ active: 2, waiting: 2 });
    const other = await share.acquire('b');
    expect(share.usage('b')).toEqual({ active: 1, waiting: 0 });
    other();
    // A release hands the slot to the first waiter of the same key.
    held[0]!();
    const next = await queued[0]!;
    expect(share.usage('a')).toEqual({ active: 2, waiting: 1 });
    held[1]!();
    next();
    (await queued[1]!)();
    expect(share.usage('a')).toEqual({ active: 0, waiting: 0 });
  });

  it('counts a release once, however often it is called', async () => {
    const share = new ConnectionShare({ perKey: 1, waitMs: 60_000 });
    const release = await share.acquire('a');
    release();
    release();
    expect(share.usage('a')).toEqual({ active: 0, waiting: 0 });
    await share.acquire('a');
    expect(share.usage('a')).toEqual({ active: 1, waiting: 0 });
  });

  it('refuses a waiter whose wait runs out, and leaves the queue', async () => {
    const share = new ConnectionShare({ perKey: 1, waitMs: 20 });
    const release = await share.acquire('a');
    const waiting = share.acquire('a');
    await expect(waiting).rejects.toMatchObject({ name: 'ConnectionShareExhausted', perKey: 1 });
    expect(share.usage('a')).toEqual({ active: 1, waiting: 0 });
    release();
    expect(share.usage('a')).toEqual({ active: 0, waiting: 0 });
  });

  it('drops a waiter whose caller leaves, and passes the slot to the next one', async () => {
    const share = new ConnectionShare({ perKey: 1, waitMs: 60_000 });
    const release = await share.acquire('a');
    const caller = new AbortController();
    const leaving = share.acquire('a', caller.signal);
    caller.abort(new Error('caller left'));
    await expect(leaving).rejects.toThrow('caller left');
    // The queue has room again, and the slot goes to the waiter that stayed.
    const staying = share.acquire('a');
    expect(share.usage('a')).toEqual({ active: 1, waiting: 1 });
    release();
    (await staying)();
    expect(share.usage('a')).toEqual({ active: 0, waiting: 0 });
    await expect(share.acquire('a', caller.signal)).rejects.toThrow('caller left');
  });
});
