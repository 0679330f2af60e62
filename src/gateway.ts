/**
 * Composition root: turns a validated Config into a running gateway (stores, identity, routing, HTTP
 * app) and knows how to take it down in order. Used by the CLI and by tests that need a real gateway.
 */
import { randomBytes } from 'node:crypto';
import { ConsoleOverview } from './accounting/console-overview.ts';
import { createSpendAccounting } from './accounting/spend-accounting.ts';
import { SpendQueries } from './accounting/spend-queries.ts';
import { type BatchFiles, createBatchFiles } from './batch/batch-files.ts';
import type { BatchWorker } from './batch/batch-worker.ts';
import { startBatchWorker } from './batch/start-batch-worker.ts';
import type { Config } from './config/config.ts';
import { readinessGates, readinessProbes } from './gateway-readiness.ts';
import { shutDownGateway } from './gateway-shutdown.ts';
import { openGatewayStores } from './gateway-stores.ts';
import { buildApp, VERSION } from './http/app.ts';
import type { App } from './http/app-types.ts';
import { createKeyHasher } from './identity/api-key-secret.ts';
import {
  AuthInvalidationPublisher,
  allListeners,
  listenForInvalidations,
} from './identity/auth-invalidation.ts';
import { Authenticator } from './identity/authenticator.ts';
import { IdentityAdmin } from './identity/identity-admin.ts';
import { OrganizationOf } from './identity/organization-of.ts';
import { TierPolicyAdmin } from './identity/tier-policy-admin.ts';
import { type Clock, systemClock } from './lib/clock.ts';
import { systemRandom } from './lib/random.ts';
import { BudgetReconciler } from './limits/budget-reconciler.ts';
import { CallerAdmission } from './limits/caller-admission.ts';
import { DeploymentCapacity } from './limits/deployment-capacity.ts';
import { startOutputGovernance } from './limits/output-requirements.ts';
import { RejectionCounter } from './limits/rejection-counter.ts';
import { startTierPolicies, type TierPolicies } from './limits/tier-policies.ts';
import { createMcpServices, type McpServices } from './mcp/mcp-services.ts';
import type { Logger } from './observability/logger.ts';
import { createMetrics } from './observability/metrics.ts';
import { Readiness } from './observability/readiness.ts';
import type { StartupScope } from './process-lifecycle.ts';
import { builtinProviders } from './providers/builtin-providers.ts';
import { McpToolLoop } from './proxy/mcp-tool-loop.ts';
import { ModalityPipeline } from './proxy/modality-pipeline.ts';
import { endpointsOfGroups } from './proxy/request-admission.ts';
import { ResponseCache } from './proxy/response-cache.ts';
import { TextPipeline } from './proxy/text-pipeline.ts';
import { DeploymentHealth } from './routing/deployment-health.ts';
import { FallbackEventLog } from './routing/fallback-events.ts';
import { buildModelRegistry } from './routing/model-registry.ts';
import { Router } from './routing/router.ts';
import { createStrategy } from './routing/strategies/create-strategy.ts';
import { AuditRetention } from './store/db/audit-retention.ts';
import type { Database } from './store/db/create-database.ts';
import { AuditRepository } from './store/db/repositories/audit-repository.ts';
import { BatchRepository } from './store/db/repositories/batch-repository.ts';
import { ConsoleOverviewRepository } from './store/db/repositories/console-overview-repository.ts';
import { SettingsRepository } from './store/db/repositories/settings-repository.ts';
import type { SharedStore } from './store/shared/shared-store.ts';

export interface GatewayOptions {
  config: Config;
  masterKey: string;
  logger: Logger;
  clock?: Clock;
  /** Prefix of every shared-store key and channel (tests isolate themselves with it). */
  storePrefix?: string;
  /** Rate-limit time for a Redis store (tests); by default the Redis server's own clock. */
  storeClock?: Clock;
  /** PostgreSQL schema to use (tests isolate themselves with it). */
  databaseSchema?: string;
  /** Run the batch worker in this process when batches are enabled (default true). */
  batchWorker?: boolean;
  /** Apply migrations at start (the cluster primary does it once, before forking). */
  migrate?: boolean;
  collectProcessMetrics?: boolean;
  /** Where the built console is (default ui/dist); tests point it at an empty folder. */
  consoleDistDir?: string;
  /** The process's start-up scope (process-lifecycle.ts): a stop meanwhile closes what was opened. */
  startup?: StartupScope;
}

export interface Gateway {
  app: App;
  readiness: Readiness;
  database: Database;
  store: SharedStore;
  /** This replica's in-memory tier-policy view (what admission reads). */
  tierPolicies: TierPolicies;
  /** Batch files (the batch worker writes output files through it); undefined while batches are disabled. */
  batchFiles: BatchFiles | undefined;
  /** The in-process batch worker, when this process runs one. */
  batchWorker: BatchWorker | undefined;
  /** The MCP gateway's parts (catalogue, upstream clients with their connection shares). */
  mcp: McpServices;
  /**
   * Reports not ready and keeps serving for `preStopMs` (load balancers take the replica out meanwhile),
   * then stops accepting and finishes in-flight requests within `graceMs`; streams still open after it
   * end with an in-band error event. Closes everything.
   */
  close(graceMs?: number, preStopMs?: number): Promise<void>;
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const general = config.general_settings;
  const paramWarnings: string[] = [];
  const registry = buildModelRegistry(config, builtinProviders(), clock.now(), paramWarnings);
  for (const warning of paramWarnings) logger.warn(warning);
  logger.info(endpointsOfGroups(registry.groups()));
  const { database, telemetry, store } = await openGatewayStores(options, clock, logger);
  const salt =
    general.salt_key ??
    (await new SettingsRepository(database.db).getOrCreate(
      'key_salt',
      randomBytes(32).toString('base64url'),
    ));
  const hashKey = createKeyHasher(salt);

  const authenticator = new Authenticator({
    db: database.db,
    hashKey,
    masterKey: options.masterKey,
    clock,
    ttlMs: general.auth_cache_ttl_seconds * 1000,
    ...(general.allow_requests_on_db_unavailable
      ? { staleWhileUnavailable: { maxStaleMs: general.auth_cache_max_stale_seconds * 1000 } }
      : {}),
  });
  const tierPolicies = await startTierPolicies({
    db: database.db,
    general: config.general_settings,
    sources: config.tier_mode_sources,
    logger,
  });
  const outputRequirements = await startOutputGovernance({
    config,
    db: database.db,
    store,
    tierPolicies,
    logger,
  });
  await listenForInvalidations(store, [
    { invalidate: (targets) => authenticator.invalidate(targets), resync: () => authenticator.clear() },
    { invalidate: (targets) => tierPolicies.invalidate(targets), resync: () => void tierPolicies.refresh() },
  ]);
  const publisher = new AuthInvalidationPublisher({
    db: database.db,
    store,
    local: allListeners([authenticator, tierPolicies]),
    now: () => clock.now(),
  });
  const tierPolicyAdmin = new TierPolicyAdmin({
    db: database.db,
    publisher,
    clock,
    applied: () => tierPolicies.refresh(),
    // A stored tier policy is active only while tier policies enforce (spec rule 8).
    checkRequirements: () => (tierPolicies.enforcing ? outputRequirements.assertMet() : undefined),
  });
  const identityAdmin = new IdentityAdmin({
    db: database.db,
    publisher,
    hashKey,
    clock,
    outputPolicyCheck: () => outputRequirements.assertMet(),
  });
  const auditRetention = new AuditRetention({
    database,
    clock,
    retentionDays: general.audit_retention_days,
    onError: (error) => logger.warn({ err: error }, 'audit retention sweep failed'),
  });
  auditRetention.start();
  const invalidationWorker = general.cache_invalidation_worker_enabled
    ? setInterval(() => {
        publisher
          .publishQueued()
          .catch((error: unknown) => logger.warn({ err: error }, 'cache invalidation retry failed'));
      }, 1_000).unref()
    : undefined;

  const metrics = createMetrics({ collectProcessMetrics: options.collectProcessMetrics ?? true });
  const spend = await createSpendAccounting({ config, database: telemetry, clock, logger, metrics });
  for (const warning of spend.warnings) logger.warn(warning);
  const readiness = new Readiness({
    probes: readinessProbes(database, store, spend),
    ...readinessGates(config),
    clock,
  });
  const mcp = createMcpServices({
    db: database.db,
    store,
    clock,
    metrics,
    logger,
    secretSalt: salt,
    version: VERSION,
    settings: general,
    servers: config.mcp_servers,
  });
  await mcp.start();
  const settings = config.router_settings;
  const health = new DeploymentHealth(
    {
      allowedFails: settings.allowed_fails,
      cooldownMs: settings.cooldown_time * 1000,
      latencyTtlMs: settings.routing_strategy_args.ttl * 1000,
    },
    clock,
  );
  const capacity = new DeploymentCapacity(
    settings.enable_pre_call_checks ||
      ['usage-based-routing', 'usage-based-routing-v2', 'RateLimitAwareStrategy'].includes(
        settings.routing_strategy,
      ),
  );
  const rejections = new RejectionCounter({ store, clock, logger });
  rejections.start();
  const admission = new CallerAdmission({
    rejections,
    store,
    settings: general,
    metrics,
    logger,
    clock,
    tiers: tierPolicies,
  });
  const budgetReconciler = new BudgetReconciler({
    db: database.db,
    spendDb: telemetry.db,
    store,
    clock: options.storeClock ?? clock,
    intervalMs: general.budget_reconcile_interval_seconds * 1000,
    logger,
  });
  await budgetReconciler.start();
  const events = new FallbackEventLog();
  const router = new Router({
    registry,
    settings,
    strategy: createStrategy(settings),
    health,
    events,
    metrics,
    clock,
    random: systemRandom,
  });
  // What every proxied request goes through, whatever its endpoint.
  const pipelineParts = {
    registry,
    router,
    metrics,
    admission,
    capacity,
    requestTimeoutMs: general.request_timeout_seconds * 1000,
    accounting: spend.accounting,
  };
  const text = new TextPipeline({
    ...pipelineParts,
    cache: new ResponseCache({ settings: general.response_cache, store, metrics, logger }),
    mcpTools: new McpToolLoop({
      executor: mcp.executor,
      maxIterations: general.mcp_tool_loop_max_iterations,
    }),
  });
  const modalities = new ModalityPipeline(pipelineParts);
  const batchFiles = createBatchFiles(general, database.db, clock);
  const batchWorker =
    batchFiles && (options.batchWorker ?? true)
      ? startBatchWorker(
          {
            db: database.db,
            dialect: database.dialect,
            files: batchFiles,
            pipelines: { text, modalities },
            callerOfKey: (keyId) => authenticator.callerOfKey(keyId),
            clock,
            leaseMs: general.batch_lease_seconds * 1000,
            onError: (error) => logger.warn({ err: error }, 'batch worker round failed'),
          },
          readiness,
          metrics,
        )
      : undefined;
  const app = await buildApp({
    config,
    logger,
    clock,
    metrics,
    readiness,
    authenticator,
    identityAdmin,
    organizationOf: new OrganizationOf(database.db),
    audit: new AuditRepository(database.db),
    registry,
    admission,
    text,
    modalities,
    routing: {
      registry,
      health,
      settings,
      clock,
      events,
      usageTracked: capacity.enabled,
      readUsage: async (ids) => {
        const reads = capacity.readKeys(ids);
        const response = reads.length
          ? await store.admit({ checks: [], reads }).catch(() => undefined)
          : undefined;
        return capacity.snapshot(ids, response?.reads ?? []);
      },
    },
    mcp,
    spend: new SpendQueries({ db: telemetry.db, clock }),
    console: {
      overview: new ConsoleOverview({
        repository: new ConsoleOverviewRepository({ spendDb: telemetry.db, db: database.db }),
        clock,
        oneAtATime: telemetry.dialect === 'sqlite',
      }),
      rejections,
    },
    responseCacheStore: store,
    tierPolicyAdmin,
    tierPolicies,
    settingsBackends: { database: database.dialect, shared_store: store.kind },
    ...(options.consoleDistDir ? { consoleDistDir: options.consoleDistDir } : {}),
    batchFiles,
    batches: batchFiles ? new BatchRepository(database.db) : undefined,
  });

  return {
    app,
    readiness,
    database,
    store,
    tierPolicies,
    batchFiles,
    batchWorker,
    mcp,
    close(
      graceMs = general.shutdown_grace_seconds * 1000,
      preStopMs = general.shutdown_pre_stop_seconds * 1000,
    ) {
      const background = async () => {
        // The batch worker claims nothing more from now on; its round in flight finishes its items.
        const workerStopped = batchWorker?.stop();
        clearInterval(invalidationWorker);
        auditRetention.stop();
        await Promise.all([budgetReconciler.stop(), workerStopped]);
      };
      const closing = [
        { label: 'upstream connections', close: () => registry.close() },
        { label: 'MCP sessions', close: () => mcp.close() },
        // The last second's refusals, before the store goes.
        { label: 'the refusal counts', close: () => rejections.close() },
        { label: 'the admission leases', close: async () => admission.close() },
        { label: 'the shared store', close: () => store.close() },
        {
          label: 'the telemetry database',
          close: () => (telemetry === database ? Promise.resolve() : telemetry.close()),
        },
        { label: 'the database', close: () => database.close() },
      ];
      return shutDownGateway(
        { app, readiness, logger, stopBackground: background, flushSpend: (at) => spend.close(at), closing },
        graceMs,
        preStopMs,
      );
    },
  };
}
