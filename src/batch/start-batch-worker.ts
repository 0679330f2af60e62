/**
 * The batch worker of a gateway process: built and started when batches are enabled and this process
 * runs one (`--batch-worker on`, the default), with a required `batch_worker` readiness check (a stopped
 * worker, or one that made no round for two lease periods, makes the replica unready).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Readiness } from '../observability/readiness.ts';
import { BatchWorker, type BatchWorkerOptions } from './batch-worker.ts';

export function startBatchWorker(
  options: Omit<BatchWorkerOptions, 'workerId'>,
  readiness: Readiness,
): BatchWorker {
  const worker = new BatchWorker({
    ...options,
    workerId: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
  });
  worker.start();
  readiness.addProbe({ name: 'batch_worker', check: async () => worker.checkAlive() }, true);
  return worker;
}
