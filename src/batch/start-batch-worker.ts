/**
 * The batch worker of a process: built and started when batches are enabled and this process runs one
 * (`serve` with `--batch-worker on`, the default, or `switchboard batch-worker`), with a required
 * `batch_worker` readiness check (a stopped worker, one that made no round for two lease periods, or
 * whose last rounds all failed makes the process unready, at once: the check bypasses the cache) and
 * its metrics: items by outcome, lease reclaims, the ready queue (set by each refill of the pool from
 * its own query: no database read per scrape) and batch durations.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Metrics } from '../observability/metrics.ts';
import type { Readiness } from '../observability/readiness.ts';
import { BatchWorker, type BatchWorkerOptions } from './batch-worker.ts';

type Callbacks = 'workerId' | 'onItem' | 'onReclaims' | 'onQueueDepth' | 'onFinalized';

export function startBatchWorker(
  options: Omit<BatchWorkerOptions, Callbacks>,
  readiness: Readiness,
  metrics: Metrics,
): BatchWorker {
  const worker = new BatchWorker({
    ...options,
    workerId: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    onItem: (outcome, count) => metrics.batchItems.inc({ outcome }, count),
    onReclaims: (count) => metrics.batchLeaseReclaims.inc(count),
    onQueueDepth: (ready) => metrics.batchQueueReady.set(ready),
    onFinalized: (batch) =>
      metrics.batchDuration.observe(
        { status: batch.status },
        Math.max(0, batch.finishedAt - batch.createdAt),
      ),
  });
  worker.start();
  // Live: a dead or stale worker fails readiness at once, past the cached report.
  readiness.addProbe({ name: 'batch_worker', check: async () => worker.checkAlive(), live: true }, true);
  return worker;
}
