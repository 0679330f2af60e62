/**
 * The batch worker. Each tick: advance batch lifecycles (validating → in_progress; expiry after the
 * window; cancelling batches close their unrun items), claim a small fair share of ready items
 * (fair-order.ts) under fenced leases, run them as governed calls with the owner's identity
 * (item-runner.ts), record results or retry/delay them (item-decisions.ts), and finalize batches with
 * nothing left (batch-finalizer.ts). A revoked, blocked or expired owner key fails the batch's
 * remaining items. Time comes from the injected clock; `start` repeats ticks until `stop`.
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
import { type FinalizedBatch, finalizeBatch } from './batch-finalizer.ts';
import { NOT_RUN } from './batch-lines.ts';
import { runsItems } from './batch-object.ts';
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
  /** Items claimed per tick, across batches. */
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

export class BatchWorker {
  private readonly options: BatchWorkerOptions;
  private readonly leases: BatchItemLeaseRepository;
  private readonly batches: BatchRepository;
  private lastOwner: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private lastBeatAt: number | undefined;
  /** Epoch ms of the last completed tick (readiness: a worker that stops ticking is stale). */
  lastTickAt: number | undefined;

  constructor(options: BatchWorkerOptions) {
    this.options = options;
    this.leases = new BatchItemLeaseRepository(options.db, options.dialect);
    this.batches = new BatchRepository(options.db);
  }

  /**
   * Readiness (spec: dead or stale required workers give 503): throws unless the worker is started and a
   * round began or ended within two lease periods.
   */
  checkAlive(): void {
    if (this.stopped) throw new Error('the batch worker is not running');
    const beat = this.lastBeatAt;
    const staleMs = 2 * this.leaseMs();
    if (beat === undefined || this.options.clock.now() - beat > staleMs)
      throw new Error(`the batch worker made no round for more than ${staleMs} ms`);
  }

  private leaseMs(): number {
    return this.options.leaseMs ?? 120_000;
  }

  /** One round; returns how many items ran. */
  async tick(): Promise<number> {
    this.lastBeatAt = this.options.clock.now();
    await this.advance();
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
    const share = shareSlots(
      order,
      new Map(ready.map((batch) => [batch.batchId, batch.ready])),
      this.options.claimSize ?? 8,
    );
    const claimed: Array<{ item: ClaimedItem; ownerKeyId: string }> = [];
    for (const [batchId, count] of share) {
      const items = await this.leases.claim(batchId, count, this.options.workerId, now, this.leaseMs());
      const ownerKeyId = ready.find((batch) => batch.batchId === batchId)!.ownerKeyId;
      for (const item of items) claimed.push({ item, ownerKeyId });
    }
    const reclaims = claimed.filter(({ item }) => item.reclaimed).length;
    if (reclaims > 0) this.options.onReclaims?.(reclaims);
    const heartbeat = this.heartbeat(claimed.map(({ item }) => item));
    try {
      await Promise.all(claimed.map(({ item, ownerKeyId }) => this.runOne(item, ownerKeyId)));
    } finally {
      clearInterval(heartbeat);
    }
    await this.advance();
    this.lastTickAt = this.options.clock.now();
    this.lastBeatAt = this.lastTickAt;
    return claimed.length;
  }

  /** Ticks every `idleMs` while idle, at once while there is work, until stop(). */
  start(idleMs = 500): void {
    this.stopped = false;
    const loop = async (): Promise<void> => {
      let ran = 0;
      try {
        ran = await this.tick();
      } catch (error) {
        this.options.onError?.(error);
      }
      if (this.stopped) return;
      this.timer = setTimeout(
        () => {
          this.running = loop();
        },
        ran > 0 ? 0 : idleMs,
      );
    };
    this.running = loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
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
   * While a round's calls run, extends their leases every third of a lease period (and counts as a
   * beat for readiness), so a call slower than the lease is not taken over and sent again: the lease
   * expires only when its worker stops beating (died or hung).
   */
  private heartbeat(items: readonly ClaimedItem[]): NodeJS.Timeout | undefined {
    if (items.length === 0) return undefined;
    const byBatch = new Map<string, number[]>();
    for (const item of items)
      byBatch.set(item.batchId, [...(byBatch.get(item.batchId) ?? []), item.lineIndex]);
    const timer = setInterval(() => {
      const now = this.options.clock.now();
      this.lastBeatAt = now;
      for (const [batchId, lines] of byBatch)
        this.leases
          .extend(this.options.workerId, batchId, lines, now + this.leaseMs())
          .catch((error: unknown) => this.options.onError?.(error));
    }, this.leaseMs() / 3);
    timer.unref();
    return timer;
  }

  private closed(outcome: 'expired' | 'cancelled', count: number): void {
    if (count > 0) this.options.onItem?.(outcome, count);
  }

  /** Lifecycle moves of unfinished batches, and finalization of those with nothing left to run. */
  private async advance(): Promise<void> {
    const now = this.options.clock.now();
    const seconds = Math.floor(now / 1000);
    for (const batch of await this.batches.listByStatus(
      ['validating', 'in_progress', 'cancelling', 'finalizing'],
      100,
    )) {
      if (batch.finalized) continue;
      if (batch.status === 'validating')
        await this.batches.update(batch.id, { status: 'in_progress', in_progress_at: seconds }, [
          'validating',
        ]);
      // A batch already finalizing decided its status before; only a running one can still expire.
      const expired = runsItems(batch.status) && batch.expires_at !== null && batch.expires_at <= seconds;
      if (expired)
        this.closed(
          'expired',
          await this.leases.closeUnrun(batch.id, 'expired', JSON.stringify(NOT_RUN.expired), now, true),
        );
      if (batch.status === 'cancelling')
        this.closed(
          'cancelled',
          await this.leases.closeUnrun(batch.id, 'cancelled', JSON.stringify(NOT_RUN.cancelled), now),
        );
      if ((await this.leases.unfinished(batch.id)) > 0) continue;
      const finalized = await finalizeBatch(
        {
          db: this.options.db,
          files: this.options.files,
          clock: this.options.clock,
          owner: this.options.workerId,
          leaseMs: this.leaseMs(),
        },
        batch.id,
        expired,
      );
      if (finalized) this.options.onFinalized?.(finalized);
    }
  }
}
