/**
 * Keeps the stored tool catalogues current: fetches tools/list from an upstream on create, on
 * refresh-capabilities and on the configured interval, stores the valid tools in one transaction and
 * tells every process to reload. On the interval only one replica refreshes each server (a short lease
 * in the shared store), so N replicas do not ask every upstream N times.
 */
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../observability/logger.ts';
import { McpServerRepository } from '../store/db/repositories/mcp-server-repository.ts';
import { McpToolRepository } from '../store/db/repositories/mcp-tool-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';
import { SERVER_DISABLED } from './admin/mcp-admin-views.ts';
import type { McpCatalog } from './mcp-catalog.ts';
import { upstreamRpcError } from './tool-executor.ts';
import type { UpstreamClients } from './upstream/upstream-clients.ts';
import { UpstreamMcpError } from './upstream/upstream-mcp-error.ts';

export type RefreshOutcome =
  | { ok: true; tool_count: number; skipped_tools: number }
  | { ok: false; error: string };

export interface CatalogRefresherOptions {
  db: Kysely<DatabaseSchema>;
  catalog: McpCatalog;
  clients: UpstreamClients;
  store: SharedStore;
  clock: Clock;
  logger: Logger;
  intervalSeconds: number;
}

export class CatalogRefresher {
  private readonly options: CatalogRefresherOptions;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: CatalogRefresherOptions) {
    this.options = options;
  }

  /** Fetches and stores one server's tools now; never throws for upstream failures (they are reported). */
  async refresh(serverId: string): Promise<RefreshOutcome> {
    const { db, clients, clock, catalog } = this.options;
    const server = await new McpServerRepository(db).get(serverId);
    if (!server) return { ok: false, error: 'the server no longer exists' };
    if (!server.enabled) return { ok: false, error: SERVER_DISABLED }; // never connect to a disabled server
    let outcome: RefreshOutcome;
    try {
      const listed = await clients.for(server).listTools();
      const tools = listed.flatMap((item) => {
        const parsed = ToolSchema.safeParse(item);
        if (!parsed.success) return [];
        const definition = item as Record<string, unknown>;
        return [
          {
            tool_name: parsed.data.name,
            description: typeof definition.description === 'string' ? definition.description : null,
            input_schema: definition.inputSchema as Record<string, unknown>,
            definition,
          },
        ];
      });
      const unique = [...new Map(tools.map((tool) => [tool.tool_name, tool])).values()];
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        await new McpToolRepository(trx).replace(serverId, unique, now);
        await new McpServerRepository(trx).recordRefresh(serverId, now, null);
      });
      outcome = { ok: true, tool_count: unique.length, skipped_tools: listed.length - unique.length };
    } catch (error) {
      const message =
        error instanceof UpstreamMcpError
          ? upstreamRpcError(error, server.server_key, 'tools/list', server.request_timeout_ms).message
          : 'the refresh failed unexpectedly';
      if (!(error instanceof UpstreamMcpError))
        this.options.logger.error({ err: error }, 'MCP catalogue refresh failed');
      await new McpServerRepository(db).recordRefresh(serverId, clock.now(), message);
      outcome = { ok: false, error: message };
    }
    await catalog.changed();
    return outcome;
  }

  /** Refreshes every enabled server on the interval (0 turns it off). */
  start(): void {
    const seconds = this.options.intervalSeconds;
    if (seconds <= 0) return;
    this.timer = setInterval(() => void this.refreshDue(seconds * 1000), seconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async refreshDue(intervalMs: number): Promise<void> {
    for (const server of this.options.catalog.snapshot.byId.values()) {
      if (!server.record.enabled) continue;
      try {
        const lease = `mcp:refresh-lease:${server.record.server_id}`;
        if (
          !(await this.options.store.setIfAbsent(
            lease,
            String(process.pid),
            Math.max(1_000, intervalMs - 1_000),
          ))
        ) {
          continue;
        }
        await this.refresh(server.record.server_id);
      } catch (error) {
        this.options.logger.warn(
          { err: error, server: server.record.server_key },
          'MCP catalogue refresh skipped',
        );
      }
    }
  }
}
