/**
 * The worker's pool and its scan, on SQLite and PostgreSQL (issue 15 review): every unfinished batch
 * moves through its lifecycle however many there are (a keyset scan, not the 100 oldest); an expired
 * batch's items are never claimed; a call in flight keeps its lease until it settles even when another
 * item of its round failed (no second send after the lease); a slow call holds one slot, not the
 * worker (owner B progresses beside owner A's slow item); a 429 without retry-after fails its item with
 * the 429 in the error file instead of delaying it until the window closes.
 */
import { describe, expect, it } from 'vitest';
import { masterCaller } from '../../src/identity/authenticator.ts';
import { GatewayError } from '../../src/lib/gateway-error.ts';
import { BatchItemLeaseRepository } from '../../src/store/db/repositories/batch-item-lease-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import { batchWorkerHarness, eventually } from '../support/batch-worker-harness.ts';

describe.each(await availableBackends())('batch worker pool on %s', (_name, makeBackend) => {
  const h = batchWorkerHarness(makeBackend);
  const leases = () => new BatchItemLeaseRepository(h.db.db, h.db.dialect);

  it('moves the 101st unfinished batch through its lifecycle (the scan pages through all)', async () => {
    // 100 older batches another (live) worker is busy with: unfinished, nothing to do for this one.
    for (let index = 0; index < 100; index++) {
      const id = `scan_${String(index).padStart(3, '0')}`;
      await h.createBatch(id, ['busy']);
      await leases().claim(id, 1, 'other', h.clock.now(), 600_000);
    }
    h.clock.advance(1_000);
    await h.createBatch('scan_last', ['never'], { status: 'cancelling' });
    await h.worker().tick();
    expect((await h.batches.get('scan_last'))?.status).toBe('cancelled');
    expect(h.calls).not.toContain('never');
  });

  it('never claims the items of a batch past its window, even before a round expired it', async () => {
    await h.createBatch('window_shut', ['late'], { window: 10 });
    h.clock.advance(11_000);
    expect((await leases().readyBatches(h.clock.now())).map((batch) => batch.batchId)).not.toContain(
      'window_shut',
    );
    expect(await leases().claim('window_shut', 5, 'w1', h.clock.now(), 60_000)).toEqual([]);
  });

  it("keeps a slow call's lease alive when another item of its round failed: it is sent once", async () => {
    const slow = h.hold('slow-once');
    await h.createBatch('pool_bad', ['x'], { ownerKeyId: 'key-bad' });
    await h.createBatch('pool_slow', ['slow-once'], { ownerKeyId: 'key-1' });
    const errors: unknown[] = [];
    const first = h.worker({
      leaseMs: 300,
      callerOfKey: async (keyId) => {
        if (keyId === 'key-bad') throw new Error('the key store hiccuped');
        return { ...masterCaller, kind: 'api_key', keyId };
      },
      onError: (error) => errors.push(error),
    });
    const round = first.tick();
    await slow.reached;
    const expiry = async () => (await h.batches.listItems('pool_slow', 0, 1))[0]!.lease_expires_at as number;
    const claimedUntil = await expiry();
    h.clock.advance(250);
    await eventually('the slow call’s lease is extended', async () => (await expiry()) > claimedUntil);
    h.clock.advance(100); // past the lease the claim took
    const second = h.worker({ workerId: 'w2', leaseMs: 300 }).tick();
    await eventually('the second worker ran the failed item', () => h.calls.includes('x'));
    slow.release();
    await Promise.all([round, second]);
    expect(h.calls.filter((content) => content === 'slow-once')).toHaveLength(1);
    expect(errors).toEqual([expect.objectContaining({ message: 'the key store hiccuped' })]);
    expect((await h.batches.get('pool_slow'))?.completed).toBe(1);
  });

  it("runs owner B's items while owner A's slow call holds one slot", async () => {
    const slowA = h.hold('slow-a');
    await h.createBatch('fair_a', ['slow-a'], { ownerKeyId: 'key-a' });
    await h.createBatch('fair_b', ['b1', 'b2', 'b3', 'b4'], { ownerKeyId: 'key-b' });
    const run = h.worker({ claimSize: 2, workerId: 'w-fair' });
    run.start(5);
    try {
      await slowA.reached;
      await eventually(
        "owner B's batch completed",
        async () => (await h.batches.get('fair_b'))?.status === 'completed',
      );
      expect((await h.batches.listItems('fair_a', 0, 1))[0]?.status).toBe('leased');
    } finally {
      slowA.release();
      await run.stop();
    }
    expect((await h.batches.get('fair_a'))?.completed).toBe(1);
  });

  it('fails an item refused with a 429 that has no retry-after, the 429 in the error file', async () => {
    h.refusals.set(
      'spent',
      new GatewayError({
        status: 429,
        type: 'budget_exceeded',
        code: 'budget_exceeded',
        message: 'The lifetime budget of the key is spent.',
      }),
    );
    await h.createBatch('no_reset', ['spent', 'fine']);
    await h.worker().tick();
    const batch = await h.batches.get('no_reset');
    expect(batch).toMatchObject({ finalized: 1, completed: 1, failed: 1 });
    const failed = await h.lines(batch?.error_file_id);
    expect(failed).toEqual([
      expect.objectContaining({
        custom_id: 'c0',
        response: expect.objectContaining({
          status_code: 429,
          body: { error: expect.objectContaining({ code: 'budget_exceeded' }) },
        }),
      }),
    ]);
  });
});
