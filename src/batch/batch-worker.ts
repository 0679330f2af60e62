/**
 * The batch worker. A continuous pool of `claimSize` slots: whenever a slot frees, it claims ready items
 * in the fair order (fair-order.ts) under fenced leases, so one slow call holds one slot, not a round;
 * each item runs as a governed call with the owner's identity (item-runner.ts) and its result is
 * recorded, retried or delayed (item-decisions.ts); a revoked, blocked or expired owner key fails the
 * batch's remaining items. The leases of every call in flight are extended until that call settles.
 * Rounds every `idleMs` advance batch lifecycles and finalize (batch-lifecycle.ts) and refill the pool.
 * Time comes from the injected clock.
 */
import type { Kysely } from 'kysely';
import type { Caller } from '../canonical/caller.ts';
import { masterCaller } from '../identity/authenticator.ts';
import type { Clock } from '../lib/clock.ts';
import { isGatewayError } from '../lib/gateway-error.ts';
import type { Dialect } from '../store/db/create-database.ts';
import {
  BatchItemLeaseRepository,
  type ClaimedItem,
} from '../store/db/repositories/batch-item-lease-repository.ts';
import { BatchRepository } from '../store/db/repositories/batch-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import { type BatchFiles, MASTER_OWNER } from './batch-files.ts';
import type { FinalizedBatch } from './batch-finalizer.ts';
import { BatchLifecycle } from './batch-lifecycle.ts';
import { fairOrder, shareSlots } from './fair-order.ts';
import { DEFAULT_RETRY_POLICY, decideFailure, type RetryPolicy } from './item-decisions.ts';
import { type ItemPipelines, runItem } from './item-runner.ts';

/** What happened to an item in a round: its result, a retry or delay, a late result discarded, or closed unrun. */
export type BatchItemOutcome =
  | 'succeeded'
  | 'failed'
  | 'retried'
  | 'delayed'
  | 'discarded'
  | 'cancelled'
  | 'expired';

export interface BatchWorkerOptions {
  db: Kysely<DatabaseSchema>;
  dialect: Dialect;
  files: Pick<BatchFiles, 'writeOutput' | 'discardBytes'>;
  pipelines: ItemPipelines;
  /** The owner's Caller (Authenticator.callerOfKey); throws a 401 GatewayError for a key that is gone. */
  callerOfKey(keyId: string): Promise<Caller>;
  clock: Clock;
  workerId: string;
  /** Item and finalization leases (general_settings.batch_lease_seconds); default two minutes. */
  leaseMs?: number;
  /** Items in flight at once (the pool's slots), across batches. */
  claimSize?: number;
  retry?: RetryPolicy;
  /** Called per finished item and per reclaimed lease (metrics). */
  onItem?: (outcome: BatchItemOutcome, count: number) => void;
  onReclaims?: (count: number) => void;
  /** Items ready to run at the start of each round (the queue-depth gauge). */
  onQueueDepth?: (ready: number) => void;
  /** A batch this worker moved to its terminal status (the duration histogram). */
  onFinalized?: (batch: FinalizedBatch) => void;
  onError?: (error: unknown) => void;
}

/** Consecutive failed rounds after which the worker reports itself unready. */
export const FAILED_ROUNDS_UNREADY = 3;

export class BatchWorker {
  private readonly options: BatchWorkerOptions;
  private readonly leases: BatchItemLeaseRepository;
  private readonly batches: BatchRepository;
  private readonly lifecycle: BatchLifecycle;
  /** Calls in flight by `batchId:lineIndex:token`; an entry leaves only once its call settled. */
  private readonly inFlight = new Map<string, { item: ClaimedItem; done: Promise<void> }>();
  private lastOwner: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private filling: Promise<number> | undefined;
  private fillAgain = false;
  private started = false;
  private stopping = false;
  private lastBeatAt: number | undefined;
  private failedRounds = 0;
  private lastFailure: unknown;

  constructor(options: BatchWorkerOptions) {
    this.options = options;
    this.leases = new BatchItemLeaseRepository(options.db, options.dialect);
    this.batches = new BatchRepository(options.db);
    this.lifecycle = new BatchLifecycle({
      db: options.db,
      files: options.files,
      clock: options.clock,
      workerId: options.workerId,
      leaseMs: this.leaseMs(),
      leases: this.leases,
      batches: this.batches,
      onClosed: (outcome, count) => {
        if (count > 0) this.options.onItem?.(outcome, count);
      },
      onFinalized: options.onFinalized,
      onProgress: () => {
        this.lastBeatAt = this.options.clock.now();
      },
    });
  }

  /**
   * Readiness (spec: dead or stale required workers give 503): throws unless the worker is started, its
   * last round (or a finalization's progress) is within two lease periods, and its last
   * FAILED_ROUNDS_UNREADY rounds did not all fail.
   */
  checkAlive(): void {
    if (!this.started || this.stopping) throw new Error('the batch worker is not running');
    if (this.failedRounds >= FAILED_ROUNDS_UNREADY) {
      const reason = this.lastFailure instanceof Error ? this.lastFailure.message : String(this.lastFailure);
      throw new Error(`the batch worker's last ${this.failedRounds} rounds failed: ${reason}`);
    }
    const beat = this.lastBeatAt;
    const staleMs = 2 * this.leaseMs();
    if (beat === undefined || this.options.clock.now() - beat > staleMs)
      throw new Error(`the batch worker made no round for more than ${staleMs} ms`);
  }

  private leaseMs(): number {
    return this.options.leaseMs ?? 120_000;
  }

  private slots(): number {
    return this.options.claimSize ?? 8;
  }

  /**
   * One whole round (tests and tools): lifecycles, fill the free slots, wait for every call in flight
   * to settle, lifecycles again. Returns how many items it claimed; rejects, after finishing the round,
   * with what failed (one batch's error, or an AggregateError of several).
   */
  async tick(): Promise<number> {
    const errors = await this.advance();
    const claimed = await this.fillSafely(errors);
    await this.settled();
    errors.push(...(await this.advance()));
    this.roundEnded(errors);
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} errors in one batch round`);
    return claimed;
  }

  /** A round every `idleMs` (lifecycles, then fill the pool); a freed slot is refilled at once, until stop(). */
  start(idleMs = 500): void {
    this.started = true;
    this.stopping = false;
    const loop = async (): Promise<void> => {
      const errors = await this.advance();
      await this.fillSafely(errors);
      this.roundEnded(errors);
      for (const error of errors) this.options.onError?.(error);
      if (this.stopping) return;
      this.timer = setTimeout(() => {
        this.running = loop();
      }, idleMs);
    };
    this.running = loop();
  }

  /** Claims nothing more and resolves once every call in flight recorded its result. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.running;
    await this.filling;
    await this.settled();
  }

  private async advance(): Promise<unknown[]> {
    try {
      return await this.lifecycle.advance();
    } catch (error) {
      return [error];
    }
  }

  private roundEnded(errors: readonly unknown[]): void {
    if (errors.length === 0) {
      this.failedRounds = 0;
      this.lastBeatAt = this.options.clock.now();
    } else {
      this.failedRounds++;
      this.lastFailure = errors[errors.length - 1];
    }
  }

  private async fillSafely(errors: unknown[]): Promise<number> {
    try {
      return await this.fill();
    } catch (error) {
      errors.push(error);
      return 0;
    }
  }

  /** Waits until no call is in flight (a settling call may not refill: stop() or a tick). */
  private async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
  }

  /** Fills the free slots; one fill at a time (a request during one runs again after it). */
  private fill(): Promise<number> {
    if (this.filling) {
      this.fillAgain = true;
      return this.filling;
    }
    this.filling = (async () => {
      let claimed = 0;
      try {
        do {
          this.fillAgain = false;
          claimed += await this.fillOnce();
        } while (this.fillAgain && !this.stopping);
      } finally {
        this.filling = undefined;
      }
      return claimed;
    })();
    return this.filling;
  }

  private async fillOnce(): Promise<number> {
    const free = this.slots() - this.inFlight.size;
    if (free <= 0 || this.stopping) return 0;
    const now = this.options.clock.now();
    const ready = await this.leases.readyBatches(now);
    this.options.onQueueDepth?.(ready.reduce((sum, batch) => sum + batch.ready, 0));
    const owners = new Map(ready.map((batch) => [batch.batchId, batch.ownerTeamId ?? batch.ownerKeyId]));
    const order = fairOrder(
      ready.map((batch) => ({
        batchId: batch.batchId,
        ownerKey: owners.get(batch.batchId)!,
        createdAt: batch.createdAt,
      })),
      this.lastOwner,
    );
    if (order.length > 0) this.lastOwner = owners.get(order[0]!);
    const share = shareSlots(order, new Map(ready.map((batch) => [batch.batchId, batch.ready])), free);
    let claimed = 0;
    let reclaims = 0;
    for (const [batchId, count] of share) {
      const items = await this.leases.claim(batchId, count, this.options.workerId, now, this.leaseMs());
      const ownerKeyId = ready.find((batch) => batch.batchId === batchId)!.ownerKeyId;
      for (const item of items) {
        if (item.reclaimed) reclaims++;
        this.launch(item, ownerKeyId);
      }
      claimed += items.length;
    }
    if (reclaims > 0) this.options.onReclaims?.(reclaims);
    return claimed;
  }

  /** Runs one claimed item in its slot; when it settles the slot frees and (while started) refills. */
  private launch(item: ClaimedItem, ownerKeyId: string): void {
    const key = `${item.batchId}:${item.lineIndex}:${item.token}`;
    const done = this.runOne(item, ownerKeyId)
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => {
        this.inFlight.delete(key);
        if (this.inFlight.size === 0) this.stopHeartbeat();
        if (this.started && !this.stopping)
          this.fill().catch((error: unknown) => this.options.onError?.(error));
      });
    this.inFlight.set(key, { item, done });
    this.startHeartbeat();
  }

  private async runOne(item: ClaimedItem, ownerKeyId: string): Promise<void> {
    const lease = { batchId: item.batchId, lineIndex: item.lineIndex, token: item.token };
    const batch = await this.batches.get(item.batchId);
    if (!batch) return;
    let caller: Caller;
    try {
      caller = ownerKeyId === MASTER_OWNER ? masterCaller : await this.options.callerOfKey(ownerKeyId);
    } catch (error) {
      if (!isGatewayError(error) || error.status !== 401) throw error;
      const reason = JSON.stringify({ code: error.code, message: `The batch owner's key: ${error.message}` });
      const closed = await this.leases.closeUnrun(
        item.batchId,
        'failed',
        reason,
        this.options.clock.now(),
        true,
      );
      this.options.onItem?.('failed', closed);
      return;
    }
    const requestId = `${item.batchId}-${item.lineIndex}-${item.token}`;
    const run = await runItem(
      this.options.pipelines,
      batch.endpoint,
      item.body,
      caller,
      requestId,
      new AbortController().signal,
    );
    if (run.kind === 'answered') {
      const stored = await this.leases.complete(lease, {
        outcome: 'succeeded',
        response: JSON.stringify(run.response),
        error: null,
      });
      this.options.onItem?.(stored ? 'succeeded' : 'discarded', 1);
      return;
    }
    const now = this.options.clock.now();
    const decision = decideFailure(run, item.attempts, now, this.options.retry ?? DEFAULT_RETRY_POLICY);
    if (decision.kind === 'fail') {
      const stored = await this.leases.complete(lease, {
        outcome: 'failed',
        response: JSON.stringify(run.response),
        error: null,
      });
      this.options.onItem?.(stored ? 'failed' : 'discarded', 1);
      return;
    }
    const stored = await this.leases.release(lease, decision.notBefore, decision.kind === 'retry');
    this.options.onItem?.(stored ? (decision.kind === 'retry' ? 'retried' : 'delayed') : 'discarded', 1);
  }

  /**
   * While calls are in flight, extends their leases every third of a lease period, so a call slower
   * than the lease is not taken over and sent again: a lease expires only when its worker stops beating
   * (died or hung). Every call in flight is covered until it settles, whatever the others did.
   */
  private startHeartbeat(): void {
    if (this.heartbeatTimer) return;
    this.heartbeatTimer = setInterval(() => {
      const byBatch = new Map<string, number[]>();
      for (const { item } of this.inFlight.values())
        byBatch.set(item.batchId, [...(byBatch.get(item.batchId) ?? []), item.lineIndex]);
      const until = this.options.clock.now() + this.leaseMs();
      for (const [batchId, lines] of byBatch)
        this.leases
          .extend(this.options.workerId, batchId, lines, until)
          .catch((error: unknown) => this.options.onError?.(error));
    }, this.leaseMs() / 3);
    this.heartbeatTimer.unref();
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }
}
