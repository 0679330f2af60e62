/**
 * The in-process picture of every MCP server, its stored tool catalogue, bindings and policies, so that
 * tools/list and the policy checks of tools/call need no database query and never wait on upstreams.
 * Admin changes reload it here at once and, through the shared store, in every other process; a slow
 * periodic reload covers messages lost while the store was away.
 */
import type { Kysely } from 'kysely';
import {
  type McpBindingRecord,
  McpBindingRepository,
} from '../store/db/repositories/mcp-binding-repository.ts';
import { type McpServerRecord, McpServerRepository } from '../store/db/repositories/mcp-server-repository.ts';
import {
  type McpToolPolicyRecord,
  McpToolPolicyRepository,
} from '../store/db/repositories/mcp-tool-policy-repository.ts';
import { type McpToolRecord, McpToolRepository } from '../store/db/repositories/mcp-tool-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';

export const MCP_CATALOG_CHANNEL = 'mcp-catalog';

export interface CatalogServer {
  readonly record: McpServerRecord;
  readonly tools: ReadonlyMap<string, McpToolRecord>;
  readonly bindings: readonly McpBindingRecord[];
  readonly policies: readonly McpToolPolicyRecord[];
}

export interface CatalogSnapshot {
  readonly byId: ReadonlyMap<string, CatalogServer>;
  readonly byKey: ReadonlyMap<string, CatalogServer>;
}

const emptySnapshot: CatalogSnapshot = { byId: new Map(), byKey: new Map() };

export class McpCatalog {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly store: SharedStore;
  private current: CatalogSnapshot = emptySnapshot;
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;
  private readonly listeners: Array<(snapshot: CatalogSnapshot, loadStartedAt: number) => void> = [];

  constructor(options: { db: Kysely<DatabaseSchema>; store: SharedStore }) {
    this.db = options.db;
    this.store = options.store;
  }

  get snapshot(): CatalogSnapshot {
    return this.current;
  }

  /**
   * Calls `listener` after every reload, here or prompted by another process, with the time
   * (performance.now()) the snapshot's load began: anything newer is not in it yet.
   */
  onReload(listener: (snapshot: CatalogSnapshot, loadStartedAt: number) => void): void {
    this.listeners.push(listener);
  }

  /** Loads the catalogue and follows changes made by other processes. */
  async start(): Promise<void> {
    await this.reload();
    await this.store.subscribe(
      MCP_CATALOG_CHANNEL,
      () => void this.reload().catch(() => {}),
      () => void this.reload().catch(() => {}),
    );
  }

  /** Reloads here now, then tells the other processes (a lost message is healed by the periodic reload). */
  async changed(): Promise<void> {
    await this.reload();
    await this.store.publish(MCP_CATALOG_CHANNEL, 'changed').catch(() => {});
  }

  /** Reloads from the database; concurrent calls coalesce, and a call during a load loads once more. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      try {
        let loadStartedAt: number;
        do {
          this.reloadAgain = false;
          loadStartedAt = performance.now();
          this.current = await this.load();
        } while (this.reloadAgain);
        for (const listener of this.listeners) listener(this.current, loadStartedAt);
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  private async load(): Promise<CatalogSnapshot> {
    const [servers, tools, bindings, policies] = await Promise.all([
      new McpServerRepository(this.db).listAll(),
      new McpToolRepository(this.db).listAll(),
      new McpBindingRepository(this.db).listAll(),
      new McpToolPolicyRepository(this.db).listAll(),
    ]);
    const byId = new Map<string, CatalogServer>();
    const byKey = new Map<string, CatalogServer>();
    for (const record of servers) {
      const server: CatalogServer = {
        record,
        tools: new Map(
          tools.filter((tool) => tool.server_id === record.server_id).map((tool) => [tool.tool_name, tool]),
        ),
        bindings: bindings.filter((binding) => binding.server_id === record.server_id),
        policies: policies.filter((policy) => policy.server_id === record.server_id),
      };
      byId.set(record.server_id, server);
      byKey.set(record.server_key, server);
    }
    return { byId, byKey };
  }
}
