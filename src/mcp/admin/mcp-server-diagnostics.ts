/**
 * Diagnostics of one MCP server for the admin API: a health check that runs initialize and tools/list
 * against the upstream on a throwaway connection (reporting outcome and latency), and the operations
 * view (recent calls and failures of this process, approval counts from the database).
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { McpApprovalRepository } from '../../store/db/repositories/mcp-approval-repository.ts';
import type { McpServerRecord } from '../../store/db/repositories/mcp-server-repository.ts';
import type { DatabaseSchema } from '../../store/db/tables.ts';
import { windowsAt } from '../approvals/approval-rules.ts';
import type { OperationsLog } from '../operations-log.ts';
import { upstreamRpcError } from '../tool-executor.ts';
import { upstreamSettings } from '../upstream/upstream-clients.ts';
import { type UpstreamClientOptions, UpstreamMcpClient } from '../upstream/upstream-mcp-client.ts';
import { UpstreamMcpError } from '../upstream/upstream-mcp-error.ts';
import { SERVER_DISABLED } from './mcp-admin-views.ts';

export interface HealthCheckReport {
  server_id: string;
  ok: boolean;
  latency_ms: number;
  initialize: { ok: boolean; latency_ms: number; protocol_version: string | null; session: boolean };
  tools_list: { ok: boolean; latency_ms: number; tool_count: number | null };
  error: string | null;
  checked_at: string;
}

export class McpServerDiagnostics {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly clock: Clock;
  private readonly secretBox: SecretBox;
  private readonly log: OperationsLog;
  private readonly clientOptions: UpstreamClientOptions;

  constructor(options: {
    db: Kysely<DatabaseSchema>;
    clock: Clock;
    secretBox: SecretBox;
    operations: OperationsLog;
    client: UpstreamClientOptions;
  }) {
    this.db = options.db;
    this.clock = options.clock;
    this.secretBox = options.secretBox;
    this.log = options.operations;
    this.clientOptions = options.client;
  }

  async healthCheck(server: McpServerRecord): Promise<HealthCheckReport> {
    if (!server.enabled) return this.report(server, SERVER_DISABLED);
    const client = new UpstreamMcpClient(upstreamSettings(server, this.secretBox), {
      ...this.clientOptions,
      connections: 1,
    });
    const started = performance.now();
    const report = this.report(server, null);
    try {
      const session = await client.reinitialize();
      report.initialize = {
        ok: true,
        latency_ms: elapsed(started),
        protocol_version: session.protocolVersion,
        session: session.sessionId !== undefined,
      };
      const listStarted = performance.now();
      const tools = await client.listTools();
      report.tools_list = { ok: true, latency_ms: elapsed(listStarted), tool_count: tools.length };
      report.ok = true;
    } catch (error) {
      report.error =
        error instanceof UpstreamMcpError
          ? upstreamRpcError(error, server.server_key, 'health-check', server.request_timeout_ms).message
          : 'the health check failed unexpectedly';
    } finally {
      report.latency_ms = elapsed(started);
      await client.close().catch(() => {});
    }
    return report;
  }

  /** A report of nothing done yet: it fails with `error` unless the checks fill it in. */
  private report(server: McpServerRecord, error: string | null): HealthCheckReport {
    return {
      server_id: server.server_id,
      ok: false,
      latency_ms: 0,
      initialize: { ok: false, latency_ms: 0, protocol_version: null, session: false },
      tools_list: { ok: false, latency_ms: 0, tool_count: null },
      error,
      checked_at: new Date(this.clock.now()).toISOString(),
    };
  }

  async operations(server: McpServerRecord) {
    const approvals = await new McpApprovalRepository(this.db).countByStatus(
      server.server_id,
      windowsAt(this.clock.now()),
    );
    const recent = this.log.recentCalls(server.server_id);
    return {
      server_id: server.server_id,
      server_key: server.server_key,
      scope: 'process' as const,
      call_counts: this.log.outcomeCounts(server.server_id),
      recent_calls: recent,
      recent_failures: recent.filter((call) => call.error_code !== null),
      approval_counts: approvals,
      last_refresh_error: server.last_refresh_error,
      tools_refreshed_at:
        server.tools_refreshed_at === null ? null : new Date(server.tools_refreshed_at).toISOString(),
    };
  }
}

function elapsed(since: number): number {
  return Math.round((performance.now() - since) * 10) / 10;
}
