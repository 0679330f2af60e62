/**
 * `switchboard batch-worker`: the gateway's composition (stores, identity, limits, routing, pipelines,
 * accounting) with its batch worker and without the HTTP API, so a deployment can run batch items on
 * processes of their own. An optional health listener answers only GET /health/liveliness,
 * /health/readiness, /health and /metrics (the same answers as `serve`: readiness includes the worker).
 * SIGTERM or SIGINT stops claiming, lets the round in flight finish its items, then exits 0.
 */
import { createServer, type Server } from 'node:http';
import type { Config } from './config/config.ts';
import { createGateway } from './gateway.ts';
import { VERSION } from './http/app.ts';
import type { Logger } from './observability/logger.ts';
import type { ProcessLifecycle } from './process-lifecycle.ts';

/** Why this configuration cannot run a batch worker, or undefined when it can. */
export function batchWorkerRefusal(config: Config): string | undefined {
  if (config.general_settings.embeddings_batch_enabled) return undefined;
  return `batch-worker: batches are disabled (general_settings.embeddings_batch_enabled is not true in ${config.source}), so there are no batch items to run`;
}

export interface BatchWorkerCommandOptions {
  config: Config;
  masterKey: string;
  logger: Logger;
  /** Port of the health listener; undefined: no listener. */
  healthPort: number | undefined;
  host: string;
  /** Signals from the process's first instruction; a stop during start-up exits promptly. */
  lifecycle: ProcessLifecycle;
}

const HEALTH_PATHS = new Set(['/health/liveliness', '/health/readiness', '/health', '/metrics']);

export async function runBatchWorker(options: BatchWorkerCommandOptions): Promise<void> {
  const { config, logger, lifecycle } = options;
  const gateway = await lifecycle.start(
    createGateway({
      config,
      masterKey: options.masterKey,
      logger,
      migrate: true,
      batchWorker: true,
      startup: lifecycle,
    }),
  );
  const health = options.healthPort === undefined ? undefined : await listenForHealth(gateway.app, options);
  logger.info(
    {
      config: config.source,
      database: config.general_settings.database_url.startsWith('postgres') ? 'postgresql' : 'sqlite',
      lease_seconds: config.general_settings.batch_lease_seconds,
      ...(health ? { health: `http://${options.host}:${options.healthPort}` } : {}),
    },
    `Switchboard ${VERSION} batch worker running`,
  );
  logger.flush();
  lifecycle.running((signal) => {
    logger.info({ signal }, 'batch worker stopping: finishing the items in flight');
    health?.close();
    // No HTTP clients to drain: no pre-stop wait, and the worker's round ends within its own timeouts.
    gateway
      .close(1_000, 0)
      .then(() => {
        logger.info('batch worker stopped');
        logger.flush();
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'batch worker shutdown failed');
        logger.flush();
        process.exit(1);
      });
  });
}

/** A plain node:http listener that hands the health and metrics paths to the app (inject), nothing else. */
async function listenForHealth(
  app: Awaited<ReturnType<typeof createGateway>>['app'],
  options: BatchWorkerCommandOptions,
): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    if (request.method !== 'GET' || !HEALTH_PATHS.has(path)) {
      response
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('not found: a batch worker serves only health and metrics\n');
      return;
    }
    app
      .inject({ method: 'GET', url: request.url ?? path })
      .then((answer) => {
        const type = answer.headers['content-type'];
        response
          .writeHead(answer.statusCode, type ? { 'content-type': String(type) } : {})
          .end(answer.rawPayload);
      })
      .catch(() => response.writeHead(500).end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.healthPort, options.host, () => resolve());
  });
  return server;
}
