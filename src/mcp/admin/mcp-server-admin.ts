/**
 * MCP server administration: create (the catalogue is fetched at once), update, delete, read, and the
 * bootstrap of `mcp_servers` from the configuration at start. Tokens are sealed before they are stored
 * and never leave; `transport: http` is stored as `streamable_http`. Changes through the admin API are
 * audited in their transaction (docs/audit.md); the bootstrap from the configuration file is not.
 */
import type { Kysely } from 'kysely';
import type { McpServerConfig } from '../../config/config.ts';
import { type AuditContext, appendAudit } from '../../identity/admin-audit.ts';
import type { Clock } from '../../lib/clock.ts';
import { errors } from '../../lib/error-catalogue.ts';
import type { GatewayError } from '../../lib/gateway-error.ts';
import { newId } from '../../lib/random.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { redactUrl, type UpstreamUrlPolicy, upstreamUrlProblem } from '../../lib/upstream-url-policy.ts';
import type { Page, PageRequest } from '../../store/db/repositories/limit-columns.ts';
import { McpBindingRepository } from '../../store/db/repositories/mcp-binding-repository.ts';
import {
  type McpServerChanges,
  type McpServerRecord,
  McpServerRepository,
} from '../../store/db/repositories/mcp-server-repository.ts';
import { McpToolPolicyRepository } from '../../store/db/repositories/mcp-tool-policy-repository.ts';
import { McpToolRepository } from '../../store/db/repositories/mcp-tool-repository.ts';
import type { DatabaseSchema } from '../../store/db/tables.ts';
import type { CatalogRefresher, RefreshOutcome } from '../catalog-refresher.ts';
import type { McpCatalog } from '../mcp-catalog.ts';
import type { UpstreamClients } from '../upstream/upstream-clients.ts';
import type { McpServerCreateBody, McpServerUpdateBody } from './admin-schemas.ts';
import { bindingView, policyView, type ServerView, serverView, toolView } from './mcp-admin-views.ts';

/** Headers the gateway sets itself, or that would leak the caller's gateway key: never forwarded. */
const RESERVED_HEADERS = new Set([
  'authorization',
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'mcp-session-id',
  'mcp-protocol-version',
  'cookie',
]);

const DEFAULT_TIMEOUT_MS = 30_000;

export interface McpServerAdminOptions {
  db: Kysely<DatabaseSchema>;
  clock: Clock;
  secretBox: SecretBox;
  catalog: McpCatalog;
  refresher: CatalogRefresher;
  clients: UpstreamClients;
  /** Where base_url may point (link-local and metadata addresses never; an allow-list when configured). */
  urlPolicy: UpstreamUrlPolicy;
}

export class McpServerAdmin {
  private readonly options: McpServerAdminOptions;

  constructor(options: McpServerAdminOptions) {
    this.options = options;
  }

  async create(
    body: McpServerCreateBody,
    context: AuditContext,
  ): Promise<{ server: ServerView; refresh: RefreshOutcome }> {
    checkServerBody(body, this.options.urlPolicy);
    const token = body.auth_config?.token ?? null;
    const authMode = body.auth_mode ?? (token ? 'bearer' : 'none');
    if (authMode === 'bearer' && !token) throw missingToken();
    const { db, clock, secretBox } = this.options;
    const repository = new McpServerRepository(db);
    if (await repository.getByKey(body.server_key)) throw duplicateKey(body.server_key);
    const id = newId('mcps');
    try {
      await db.transaction().execute(async (trx) => {
        const servers = new McpServerRepository(trx);
        const now = clock.now();
        await servers.insert(
          {
            server_id: id,
            server_key: body.server_key,
            name: body.name ?? body.server_key,
            base_url: body.base_url,
            enabled: body.enabled ?? true,
            auth_mode: authMode,
            auth_token_sealed: token ? secretBox.seal(token) : null,
            forwarded_headers_allowlist: normalizeHeaders(body.forwarded_headers_allowlist ?? []),
            request_timeout_ms: body.request_timeout_ms ?? DEFAULT_TIMEOUT_MS,
            source: 'api',
          },
          now,
        );
        await appendAudit(trx, context, serverEntry('create', id, null, (await servers.get(id))!), now);
      });
    } catch (error) {
      if (await repository.getByKey(body.server_key)) throw duplicateKey(body.server_key);
      throw error;
    }
    const refresh = await this.options.refresher.refresh(id);
    return { server: await this.get(id), refresh };
  }

  async update(serverId: string, body: McpServerUpdateBody, context: AuditContext): Promise<ServerView> {
    checkServerBody(body, this.options.urlPolicy);
    const { db } = this.options;
    const { current, changes } = await db
      .transaction()
      .execute((trx) => this.updateStored(trx, serverId, body, context));
    const addressChanged = changes.base_url !== undefined || changes.auth_token_sealed !== undefined;
    const enabledNow = changes.enabled === true && !current.enabled;
    if ((addressChanged || enabledNow) && (changes.enabled ?? current.enabled))
      await this.options.refresher.refresh(serverId);
    else await this.options.catalog.changed();
    return this.get(serverId);
  }

  /** The stored part of an update, with its audit entry, in one transaction. */
  private async updateStored(
    trx: Kysely<DatabaseSchema>,
    serverId: string,
    body: McpServerUpdateBody,
    context: AuditContext,
  ): Promise<{ current: McpServerRecord; changes: McpServerChanges }> {
    const { clock, secretBox } = this.options;
    const repository = new McpServerRepository(trx);
    const current = await repository.get(serverId);
    if (!current) throw errors.notFound('MCP server', serverId);
    if (body.server_key !== undefined && body.server_key !== current.server_key) {
      if (await repository.getByKey(body.server_key)) throw duplicateKey(body.server_key);
    }
    const changes: McpServerChanges = {};
    if (body.server_key !== undefined) changes.server_key = body.server_key;
    if (body.name !== undefined) changes.name = body.name;
    if (body.base_url !== undefined) changes.base_url = body.base_url;
    if (body.enabled !== undefined) changes.enabled = body.enabled;
    if (body.forwarded_headers_allowlist !== undefined) {
      changes.forwarded_headers_allowlist = normalizeHeaders(body.forwarded_headers_allowlist);
    }
    if (body.request_timeout_ms !== undefined) changes.request_timeout_ms = body.request_timeout_ms;
    if (body.auth_config?.token !== undefined) {
      changes.auth_token_sealed =
        body.auth_config.token === null ? null : secretBox.seal(body.auth_config.token);
    }
    if (body.auth_mode !== undefined) changes.auth_mode = body.auth_mode;
    const authMode = changes.auth_mode ?? current.auth_mode;
    const sealed =
      changes.auth_token_sealed !== undefined ? changes.auth_token_sealed : current.auth_token_sealed;
    if (authMode === 'bearer' && sealed === null) throw missingToken();
    const now = clock.now();
    await repository.update(serverId, changes, now);
    const after = (await repository.get(serverId))!;
    await appendAudit(trx, context, serverEntry('update', serverId, current, after), now);
    return { current, changes };
  }

  async get(serverId: string): Promise<ServerView> {
    const record = await new McpServerRepository(this.options.db).get(serverId);
    if (!record) throw errors.notFound('MCP server', serverId);
    const tools = await new McpToolRepository(this.options.db).listByServer(serverId);
    return serverView(record, tools.length);
  }

  /**
   * One server with its stored tools, bindings and policies. With `organizationId` (an organization
   * administrator's view, or a filter) only the bindings and policies of scopes inside that organization,
   * and the server-wide default policies, which belong to no organization and govern its callers too.
   */
  async detail(serverId: string, organizationId?: string) {
    const { db } = this.options;
    const record = await new McpServerRepository(db).get(serverId);
    if (!record) throw errors.notFound('MCP server', serverId);
    const all = { limit: 10_000, offset: 0 };
    const policyRepository = new McpToolPolicyRepository(db);
    const [tools, bindings, policies, serverWide] = await Promise.all([
      new McpToolRepository(db).listByServer(serverId),
      new McpBindingRepository(db).list(all, { serverId, organizationId }),
      policyRepository.list(all, { serverId, organizationId }),
      organizationId === undefined
        ? undefined
        : policyRepository.list(all, { serverId, scopeType: 'server' }),
    ]);
    const shownPolicies = serverWide ? [...serverWide.items, ...policies.items] : policies.items;
    return {
      ...serverView(record, tools.length),
      tools: tools.map((tool) => toolView(record.server_key, tool)),
      bindings: bindings.items.map(bindingView),
      policies: shownPolicies.map(policyView),
    };
  }

  async list(page: PageRequest): Promise<Page<ServerView>> {
    const { db } = this.options;
    const result = await new McpServerRepository(db).list(page);
    const counts = new Map<string, number>();
    for (const tool of await new McpToolRepository(db).listAll()) {
      counts.set(tool.server_id, (counts.get(tool.server_id) ?? 0) + 1);
    }
    return {
      items: result.items.map((record) => serverView(record, counts.get(record.server_id) ?? 0)),
      total: result.total,
    };
  }

  async delete(serverId: string, context: AuditContext): Promise<void> {
    const { db, clock } = this.options;
    await db.transaction().execute(async (trx) => {
      const repository = new McpServerRepository(trx);
      const before = await repository.get(serverId);
      if (!before || !(await repository.delete(serverId))) throw errors.notFound('MCP server', serverId);
      await appendAudit(trx, context, serverEntry('delete', serverId, before, null), clock.now());
    });
    await this.options.clients.drop(serverId);
    await this.options.catalog.changed();
  }

  async refresh(serverId: string): Promise<RefreshOutcome & { server: ServerView }> {
    await this.get(serverId);
    const outcome = await this.options.refresher.refresh(serverId);
    return { ...outcome, server: await this.get(serverId) };
  }

  /** Creates or updates the configured servers (by server_key); returns their ids for a first refresh. */
  async bootstrap(servers: readonly McpServerConfig[]): Promise<string[]> {
    const { db, clock, secretBox } = this.options;
    const repository = new McpServerRepository(db);
    const ids: string[] = [];
    for (const server of servers) {
      const fields = {
        name: server.name,
        base_url: server.base_url,
        enabled: server.enabled,
        auth_mode: server.auth_mode,
        auth_token_sealed: server.auth_config.token ? secretBox.seal(server.auth_config.token) : null,
        forwarded_headers_allowlist: normalizeHeaders(server.forwarded_headers_allowlist),
        request_timeout_ms: server.request_timeout_ms,
        source: 'config' as const,
      };
      checkServerBody(
        { base_url: server.base_url, forwarded_headers_allowlist: [...fields.forwarded_headers_allowlist] },
        this.options.urlPolicy,
      );
      const existing = await repository.getByKey(server.server_key);
      if (existing) {
        await repository.update(existing.server_id, fields, clock.now());
        ids.push(existing.server_id);
        continue;
      }
      const id = newId('mcps');
      try {
        await repository.insert({ server_id: id, server_key: server.server_key, ...fields }, clock.now());
        ids.push(id);
      } catch (error) {
        const raced = await repository.getByKey(server.server_key); // another worker inserted it first
        if (!raced) throw error;
        ids.push(raced.server_id);
      }
    }
    await this.options.catalog.changed();
    return ids;
  }

  async record(serverId: string): Promise<McpServerRecord> {
    const record = await new McpServerRepository(this.options.db).get(serverId);
    if (!record) throw errors.notFound('MCP server', serverId);
    return record;
  }
}

/** MCP servers are proxy-wide: their entries belong to no organization; the sealed token is redacted. */
function serverEntry(
  verb: 'create' | 'update' | 'delete',
  serverId: string,
  before: McpServerRecord | null,
  after: McpServerRecord | null,
) {
  return {
    action: `mcp_server.${verb}` as const,
    targetType: 'mcp_server' as const,
    targetId: serverId,
    organizationId: null,
    // A query string may hold a credential (?api_key=…): the audit log keeps the URL as the views show it.
    before: before && { ...before, base_url: redactUrl(before.base_url) },
    after: after && { ...after, base_url: redactUrl(after.base_url) },
  };
}

function checkServerBody(body: McpServerUpdateBody, policy: UpstreamUrlPolicy): void {
  const problem = body.base_url === undefined ? undefined : upstreamUrlProblem(body.base_url, policy);
  if (problem) throw errors.invalidRequest(`base_url: ${problem}.`, 'base_url');
  for (const name of body.forwarded_headers_allowlist ?? []) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw errors.invalidRequest(
        `forwarded_headers_allowlist: '${name}' cannot be forwarded (the gateway sets it, or it would leak the caller's credentials).`,
        'forwarded_headers_allowlist',
      );
    }
  }
}

function normalizeHeaders(names: readonly string[]): string[] {
  return [...new Set(names.map((name) => name.toLowerCase()))];
}

function missingToken(): GatewayError {
  return errors.invalidRequest(
    'auth_config.token: is required when auth_mode is bearer.',
    'auth_config.token',
  );
}

function duplicateKey(serverKey: string): GatewayError {
  return errors.conflict(
    `An MCP server with server_key '${serverKey}' exists already; choose another key or update it.`,
  );
}
