/**
 * The batch worker on SQLite and PostgreSQL with scripted pipelines (issue 15): items run with the
 * owner's identity and the batch finalizes with output and error files in OpenAI's format; a 429
 * delays an item without failing it; the window's expiry and a cancel close unrun items; a revoked
 * owner key fails the remaining items; the metrics callbacks see the ready queue per round and the
 * items taken over from a dead worker's expired leases. Time is a manual clock.
 */
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchFiles } from '../../src/batch/batch-files.ts';
import { BatchWorker } from '../../src/batch/batch-worker.ts';
import type { ItemPipelines } from '../../src/batch/item-runner.ts';
import type { Caller } from '../../src/canonical/caller.ts';
import { masterCaller } from '../../src/identity/authenticator.ts';
import { errors } from '../../src/lib/error-catalogue.ts';
import { GatewayError } from '../../src/lib/gateway-error.ts';
import type { Database } from '../../src/store/db/create-database.ts';
import { BatchItemLeaseRepository } from '../../src/store/db/repositories/batch-item-lease-repository.ts';
import { BatchRepository } from '../../src/store/db/repositories/batch-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import { type Backend, openBackendDatabase } from '../support/backends.ts';
import { chatBatchRow, chatItemRows } from '../support/batch-rows.ts';
import { ManualClock } from '../support/manual-clock.ts';

const owner: Caller = { ...masterCaller, kind: 'api_key', keyId: 'key-1' };

describe.each(await availableBackends())('batch worker on %s', (_name, makeBackend) => {
  let backend: Backend;
  let database: Database;
  let batches: BatchRepository;
  let files: BatchFiles;
  const clock = new ManualClock();

  beforeAll(async () => {
    backend = makeBackend();
    database = await openBackendDatabase(backend);
    batches = new BatchRepository(database.db);
    files = new BatchFiles({
      db: database.db,
      store: 'database',
      clock,
      limits: { maxLines: 50_000, maxLineBytes: 1_000_000, lineSetting: 'batch_line_max_bytes' },
    });
  });
  afterAll(async () => {
    await database?.close();
    await backend?.cleanup();
  });

  /** Chat answers `{"echo": <content>}`; a content naming a status is refused with it. */
  const seenCallers: Array<string | null> = [];
  let refusals: Record<string, GatewayError> = {};
  const pipelines: ItemPipelines = {
    modalities: { embed: () => Promise.reject(new Error('not used')) },
    text: {
      run: async (request, context) => {
        seenCallers.push(context.caller.keyId);
        const content = String(request.messages[0]?.content);
        const refusal = refusals[content];
        if (refusal) throw refusal;
        if (content === 'hold') {
          reachedHold.resolve();
          await held.promise;
        }
        return {
          kind: 'json',
          response: {} as never,
          json: JSON.stringify({ echo: content }),
          deploymentId: 'd',
          attempts: 1,
          headers: {},
        };
      },
    },
  };

  /** Calls of the content `hold` wait for this (an item in flight). */
  let held = Promise.withResolvers<void>();
  let reachedHold = Promise.withResolvers<void>();

  const worker = (callerOfKey: (keyId: string) => Promise<Caller> = async () => owner) =>
    new BatchWorker({
      db: database.db,
      dialect: database.dialect,
      files,
      pipelines,
      callerOfKey,
      clock,
      workerId: 'w1',
    });

  const createBatch = async (id: string, contents: string[], status = 'validating') => {
    const now = Math.floor(clock.now() / 1000);
    await batches.create(chatBatchRow(id, now, contents.length, { status }), chatItemRows(contents));
  };

  const lines = async (fileId: string | null | undefined) => {
    if (!fileId) return [];
    const file = await files.get(fileId, { all: true });
    return (await text(await files.content(file!)))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
  };

  it('runs every item with the owner and writes output and error files', async () => {
    refusals = { bad: errors.invalidRequest('no good', 'messages') };
    await createBatch('batch_run', ['a', 'bad', 'c']);
    await worker().tick();
    const batch = await batches.get('batch_run');
    expect(batch).toMatchObject({ status: 'completed', completed: 2, failed: 1 });
    expect(seenCallers).toContain('key-1');
    const output = await lines(batch?.output_file_id);
    expect(output.map((line) => [line.custom_id, line.response.body.echo, line.error])).toEqual([
      ['c0', 'a', null],
      ['c2', 'c', null],
    ]);
    const failed = await lines(batch?.error_file_id);
    expect(failed).toEqual([
      expect.objectContaining({
        custom_id: 'c1',
        response: expect.objectContaining({ status_code: 400 }),
        error: null,
      }),
    ]);
  });

  it('delays an item refused with 429 and runs it after retry-after', async () => {
    refusals = {
      slow: new GatewayError({
        status: 429,
        type: 'rate_limit_error',
        code: 'rate_limited',
        message: 'x',
        retryAfter: 5,
      }),
    };
    await createBatch('batch_delay', ['slow']);
    const run = worker();
    await run.tick();
    expect(await batches.get('batch_delay')).toMatchObject({ status: 'in_progress', failed: 0 });
    refusals = {};
    clock.advance(4_000);
    expect(await run.tick()).toBe(0);
    clock.advance(1_000);
    await run.tick();
    expect(await batches.get('batch_delay')).toMatchObject({ status: 'completed', completed: 1 });
  });

  it('expires a batch after its window with unrun items in the error file', async () => {
    refusals = {
      wait: new GatewayError({
        status: 429,
        type: 'rate_limit_error',
        code: 'rate_limited',
        message: 'x',
        retryAfter: 60,
      }),
    };
    await createBatch('batch_expire', ['wait', 'wait']);
    const run = worker();
    await run.tick();
    clock.advance(86_401_000);
    await run.tick();
    const batch = await batches.get('batch_expire');
    expect(batch?.status).toBe('expired');
    expect(batch?.expired_at).not.toBeNull();
    const failed = await lines(batch?.error_file_id);
    expect(failed.map((line) => line.error.code)).toEqual(['batch_expired', 'batch_expired']);
    refusals = {};
  });

  it('cancels: no new items run and the batch finalizes as cancelled', async () => {
    await createBatch('batch_cancel', ['x', 'y'], 'cancelling');
    const before = seenCallers.length;
    await worker().tick();
    const batch = await batches.get('batch_cancel');
    expect(batch?.status).toBe('cancelled');
    expect(seenCallers.length).toBe(before);
    expect((await lines(batch?.error_file_id)).map((line) => line.error.code)).toEqual([
      'batch_cancelled',
      'batch_cancelled',
    ]);
  });

  it('fails the remaining items when the owner key is revoked', async () => {
    await createBatch('batch_revoked', ['a', 'b']);
    await worker(async () => {
      throw errors.blockedApiKey();
    }).tick();
    const batch = await batches.get('batch_revoked');
    expect(batch).toMatchObject({ status: 'completed', failed: 2, completed: 0 });
  });

  it('reports the ready queue each round and counts items taken over from expired leases', async () => {
    await createBatch('batch_reclaim', ['p', 'q', 'r']);
    // A worker that died holding the first two items.
    await new BatchItemLeaseRepository(database.db, database.dialect).claim(
      'batch_reclaim',
      2,
      'dead',
      clock.now(),
      120_000,
    );
    const depths: number[] = [];
    let reclaims = 0;
    const outcomes: string[] = [];
    const run = new BatchWorker({
      db: database.db,
      dialect: database.dialect,
      files,
      pipelines,
      callerOfKey: async () => owner,
      clock,
      workerId: 'w2',
      claimSize: 1,
      onQueueDepth: (ready) => depths.push(ready),
      onReclaims: (count) => {
        reclaims += count;
      },
      onItem: (outcome, count) => outcomes.push(`${outcome}x${count}`),
      onFinalized: (batch) => outcomes.push(`finalized:${batch.status}`),
    });
    await run.tick();
    expect([depths, reclaims]).toEqual([[1], 0]);
    clock.advance(120_000);
    await run.tick();
    await run.tick();
    expect([depths, reclaims]).toEqual([[1, 2, 1], 2]);
    expect(outcomes).toEqual(['succeededx1', 'succeededx1', 'succeededx1', 'finalized:completed']);
    expect(await batches.get('batch_reclaim')).toMatchObject({ status: 'completed', completed: 3 });
  });

  it('stop() claims nothing more and resolves once the items in flight recorded their results', async () => {
    held = Promise.withResolvers<void>();
    reachedHold = Promise.withResolvers<void>();
    await createBatch('batch_stop', ['hold', 'later'], 'in_progress');
    const run = new BatchWorker({
      db: database.db,
      dialect: database.dialect,
      files,
      pipelines,
      callerOfKey: async () => owner,
      clock,
      workerId: 'w-stop',
      claimSize: 1,
    });
    run.start(10);
    await reachedHold.promise;
    let stopped = false;
    const stopping = run.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    held.resolve();
    await stopping;
    const items = await batches.listItems('batch_stop', 0, 10);
    expect(items.map((item) => item.status)).toEqual(['succeeded', 'pending']);
    expect(() => run.checkAlive()).toThrow('not running');
  });

  it('keeps the leases of calls in flight alive, so a call slower than its lease is not taken over', async () => {
    held = Promise.withResolvers<void>();
    reachedHold = Promise.withResolvers<void>();
    await createBatch('batch_beat', ['hold'], 'in_progress');
    const run = new BatchWorker({
      db: database.db,
      dialect: database.dialect,
      files,
      pipelines,
      callerOfKey: async () => owner,
      clock,
      workerId: 'w-beat',
      leaseMs: 300,
    });
    const round = run.tick();
    await reachedHold.promise;
    const expiry = async () => (await batches.listItems('batch_beat', 0, 1))[0]!.lease_expires_at!;
    const claimedUntil = await expiry();
    clock.advance(250);
    for (const deadline = Date.now() + 5_000; (await expiry()) <= claimedUntil; ) {
      if (Date.now() > deadline) throw new Error('the lease of the call in flight was never extended');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    clock.advance(100); // past the lease the claim took
    const other = new BatchItemLeaseRepository(database.db, database.dialect);
    expect(await other.claim('batch_beat', 1, 'other', clock.now(), 300)).toEqual([]);
    held.resolve();
    await round;
    expect((await batches.listItems('batch_beat', 0, 1))[0]?.status).toBe('succeeded');
  });
});
