/**
 * One pooled upstream client per MCP server, rebuilt when the server's address, token or timeout
 * changes (the old pool is closed), so connections and the upstream session are reused across calls.
 */
import type { SecretBox } from '../../lib/secret-box.ts';
import type { McpServerRecord } from '../../store/db/repositories/mcp-server-repository.ts';
import {
  type UpstreamClientOptions,
  UpstreamMcpClient,
  type UpstreamServerSettings,
} from './upstream-mcp-client.ts';

export class UpstreamClients {
  private readonly clients = new Map<
    string,
    { fingerprint: string; client: UpstreamMcpClient; createdAt: number }
  >();
  private readonly secretBox: SecretBox;
  private readonly options: UpstreamClientOptions;

  constructor(options: { secretBox: SecretBox; client: UpstreamClientOptions }) {
    this.secretBox = options.secretBox;
    this.options = options.client;
  }

  for(server: McpServerRecord): UpstreamMcpClient {
    const fingerprint = JSON.stringify([
      server.base_url,
      server.auth_mode,
      server.auth_token_sealed,
      server.request_timeout_ms,
    ]);
    const existing = this.clients.get(server.server_id);
    if (existing?.fingerprint === fingerprint) return existing.client;
    if (existing) void existing.client.close().catch(() => {});
    const client = new UpstreamMcpClient(upstreamSettings(server, this.secretBox), this.options);
    this.clients.set(server.server_id, { fingerprint, client, createdAt: performance.now() });
    return client;
  }

  async drop(serverId: string): Promise<void> {
    const existing = this.clients.get(serverId);
    this.clients.delete(serverId);
    await existing?.client.close().catch(() => {});
  }

  /**
   * Closes the clients of servers that no longer exist (deleted here or by another replica), judged by a
   * catalogue loaded from `loadStartedAt` on: a client created since (a server just added) is kept.
   */
  async retain(serverIds: ReadonlySet<string>, loadStartedAt: number): Promise<void> {
    const gone = [...this.clients]
      .filter(([serverId, entry]) => !serverIds.has(serverId) && entry.createdAt < loadStartedAt)
      .map(([serverId]) => serverId);
    await Promise.all(gone.map((serverId) => this.drop(serverId)));
  }

  /** How many upstream clients are open (diagnostics and tests). */
  get size(): number {
    return this.clients.size;
  }

  async closeAll(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(all.map((entry) => entry.client.close().catch(() => {})));
  }
}

/**
 * How to reach a server: the one place that decides whether its token is sent, so tool calls, refreshes
 * and health checks all honour auth_mode (a token kept after switching to `none` stays unused).
 */
export function upstreamSettings(server: McpServerRecord, secretBox: SecretBox): UpstreamServerSettings {
  return {
    serverKey: server.server_key,
    baseUrl: server.base_url,
    token:
      server.auth_mode === 'bearer' && server.auth_token_sealed !== null
        ? secretBox.open(server.auth_token_sealed)
        : undefined,
    requestTimeoutMs: server.request_timeout_ms,
  };
}
