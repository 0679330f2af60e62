/**
 * Assembles the MCP gateway from its parts (catalogue, upstream clients, limits, approvals, executor,
 * JSON-RPC gateway, admin use cases) and owns their lifecycle: load the catalogue, bootstrap the
 * configured servers, refresh catalogues on the interval, close upstream pools at shutdown.
 */
import type { Kysely } from 'kysely';
import type { GeneralSettings, McpServerConfig } from '../config/config.ts';
import type { Clock } from '../lib/clock.ts';
import { createSecretBox } from '../lib/secret-box.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';
import { McpAccessAdmin } from './admin/mcp-access-admin.ts';
import { McpServerAdmin } from './admin/mcp-server-admin.ts';
import { McpServerDiagnostics } from './admin/mcp-server-diagnostics.ts';
import { ApprovalAdmin } from './approvals/approval-admin.ts';
import { ApprovalGate } from './approvals/approval-gate.ts';
import { ArgumentValidator } from './argument-validator.ts';
import { CatalogRefresher } from './catalog-refresher.ts';
import { McpCatalog } from './mcp-catalog.ts';
import { McpGateway } from './mcp-gateway.ts';
import { OperationsLog } from './operations-log.ts';
import { ToolExecutor } from './tool-executor.ts';
import { ToolLimits } from './tool-limits.ts';
import { UpstreamClients } from './upstream/upstream-clients.ts';

/** Every process reloads the catalogue this often, healing invalidation messages lost in transit. */
const CATALOG_RELOAD_MS = 30_000;

export interface McpServicesOptions {
  db: Kysely<DatabaseSchema>;
  store: SharedStore;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  /** Salt from which the key sealing upstream tokens is derived. */
  secretSalt: string;
  version: string;
  /**
   * The catalogue refresh interval, each API key's share of a server's 32 connections, the degraded
   * mode of the tool limits, and where MCP base_url may point (upstream_allowed_hosts).
   */
  settings: Pick<
    GeneralSettings,
    | 'mcp_catalog_refresh_interval_seconds'
    | 'mcp_connections_per_key'
    | 'redis_degraded_mode'
    | 'upstream_allowed_hosts'
  >;
  servers: readonly McpServerConfig[];
}

export interface McpServices {
  gateway: McpGateway;
  executor: ToolExecutor;
  servers: McpServerAdmin;
  diagnostics: McpServerDiagnostics;
  access: McpAccessAdmin;
  approvals: ApprovalAdmin;
  catalog: McpCatalog;
  refresher: CatalogRefresher;
  clients: UpstreamClients;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createMcpServices(options: McpServicesOptions): McpServices {
  const { db, store, clock, metrics, logger, settings } = options;
  const secretBox = createSecretBox(options.secretSalt);
  const clientOptions = {
    clientName: 'switchboard',
    clientVersion: options.version,
    maxResponseBytes: 8 * 1024 * 1024,
    connections: 32,
    connectionsPerKey: settings.mcp_connections_per_key,
  };
  const catalog = new McpCatalog({ db, store });
  const clients = new UpstreamClients({ secretBox, client: clientOptions });
  // A server deleted on any replica has its pooled client (connections, upstream session) closed here too.
  catalog.onReload(
    (snapshot, loadStartedAt) => void clients.retain(new Set(snapshot.byId.keys()), loadStartedAt),
  );
  const operations = new OperationsLog();
  const refresher = new CatalogRefresher({
    db,
    catalog,
    clients,
    store,
    clock,
    logger,
    intervalSeconds: settings.mcp_catalog_refresh_interval_seconds,
  });
  const executor = new ToolExecutor({
    catalog,
    clients,
    limits: new ToolLimits({ store, clock, degradedMode: settings.redis_degraded_mode }),
    approvals: new ApprovalGate({ db, clock, metrics }),
    validator: new ArgumentValidator(),
    metrics,
    operations,
    logger,
    clock,
  });
  const servers = new McpServerAdmin({
    db,
    clock,
    secretBox,
    catalog,
    refresher,
    clients,
    urlPolicy: { allowedHosts: settings.upstream_allowed_hosts },
  });
  let reloadTimer: NodeJS.Timeout | undefined;
  return {
    gateway: new McpGateway({ executor, version: options.version, logger }),
    executor,
    servers,
    diagnostics: new McpServerDiagnostics({ db, clock, secretBox, operations, client: clientOptions }),
    access: new McpAccessAdmin({ db, clock, catalog }),
    approvals: new ApprovalAdmin({ db, clock, metrics, catalog }),
    catalog,
    refresher,
    clients,
    async start() {
      await catalog.start();
      const bootstrapped = await servers.bootstrap(options.servers);
      // First catalogues of configured servers arrive in the background: start-up never waits on upstreams.
      for (const serverId of bootstrapped) {
        void refresher
          .refresh(serverId)
          .catch((error: unknown) => logger.warn({ err: error }, 'MCP refresh failed'));
      }
      refresher.start();
      reloadTimer = setInterval(() => void catalog.reload().catch(() => {}), CATALOG_RELOAD_MS);
      reloadTimer.unref();
    },
    async close() {
      refresher.stop();
      clearInterval(reloadTimer);
      await clients.closeAll();
    },
  };
}
