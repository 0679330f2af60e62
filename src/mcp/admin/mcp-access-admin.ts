/**
 * Bindings (who sees a server's tools) and tool policies (how a tool may be called), both
 * create-or-update by their natural key, with references checked (400 naming the field) and every
 * change audited in its transaction (docs/audit.md) and reloaded into the catalogue of every process.
 */
import type { Kysely } from 'kysely';
import {
  type AuditChange,
  type AuditContext,
  appendAudit,
  organizationOfTarget,
} from '../../identity/admin-audit.ts';
import type { Clock } from '../../lib/clock.ts';
import { errors } from '../../lib/error-catalogue.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { newId } from '../../lib/random.ts';
import { ApiKeyRepository } from '../../store/db/repositories/api-key-repository.ts';
import type { Page, PageRequest } from '../../store/db/repositories/limit-columns.ts';
import {
  type McpBindingFilter,
  McpBindingRepository,
} from '../../store/db/repositories/mcp-binding-repository.ts';
import { McpServerRepository } from '../../store/db/repositories/mcp-server-repository.ts';
import {
  type McpPolicyChanges,
  type McpPolicyFilter,
  type McpPolicyLimits,
  McpToolPolicyRepository,
} from '../../store/db/repositories/mcp-tool-policy-repository.ts';
import { OrganizationRepository } from '../../store/db/repositories/organization-repository.ts';
import { TeamRepository } from '../../store/db/repositories/team-repository.ts';
import type { DatabaseSchema } from '../../store/db/tables.ts';
import type { McpCatalog } from '../mcp-catalog.ts';
import { loosenedField } from '../policy-resolution.ts';
import type { McpBindingBody, McpToolPolicyBody } from './admin-schemas.ts';
import { type BindingView, bindingView, type PolicyView, policyView } from './mcp-admin-views.ts';

type Transaction = Kysely<DatabaseSchema>;

export class McpAccessAdmin {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly clock: Clock;
  private readonly catalog: McpCatalog;

  constructor(options: { db: Kysely<DatabaseSchema>; clock: Clock; catalog: McpCatalog }) {
    this.db = options.db;
    this.clock = options.clock;
    this.catalog = options.catalog;
  }

  async upsertBinding(
    body: McpBindingBody,
    context: AuditContext,
  ): Promise<{ binding: BindingView; created: boolean }> {
    const result = await upsertRacing(this.db, async (trx) => {
      await requireServer(trx, body.server_id);
      await requireScope(trx, body.scope_type, body.scope_id);
      const repository = new McpBindingRepository(trx);
      const existing = await repository.findByScope(body.server_id, body.scope_type, body.scope_id);
      const now = this.clock.now();
      const changes = {
        ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
        ...(body.tool_allowlist !== undefined ? { tool_allowlist: body.tool_allowlist } : {}),
      };
      if (existing) {
        await repository.update(existing.binding_id, changes, now);
        const after = (await repository.get(existing.binding_id))!;
        const audit = await bindingEntry(trx, 'update', existing, after);
        await appendAudit(trx, context, audit, now);
        return { id: existing.binding_id, created: false };
      }
      const id = newId('mcpb');
      await repository.insert(
        {
          binding_id: id,
          server_id: body.server_id,
          scope_type: body.scope_type,
          scope_id: body.scope_id,
          enabled: body.enabled ?? true,
          tool_allowlist: body.tool_allowlist ?? null,
        },
        now,
      );
      const after = (await repository.get(id))!;
      await appendAudit(trx, context, await bindingEntry(trx, 'create', null, after), now);
      return { id, created: true };
    });
    await this.catalog.changed();
    const binding = (await new McpBindingRepository(this.db).get(result.id))!;
    return { binding: bindingView(binding), created: result.created };
  }

  async listBindings(page: PageRequest, filter: McpBindingFilter): Promise<Page<BindingView>> {
    const result = await new McpBindingRepository(this.db).list(page, filter);
    return { items: result.items.map(bindingView), total: result.total };
  }

  async deleteBinding(bindingId: string, context: AuditContext): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const repository = new McpBindingRepository(trx);
      const before = await repository.get(bindingId);
      if (!before) throw errors.notFound('MCP binding', bindingId);
      const audit = await bindingEntry(trx, 'delete', before, null);
      if (!(await repository.delete(bindingId))) throw errors.notFound('MCP binding', bindingId);
      await appendAudit(trx, context, audit, this.clock.now());
    });
    await this.catalog.changed();
  }

  async upsertPolicy(
    body: McpToolPolicyBody,
    context: AuditContext,
  ): Promise<{ policy: PolicyView; created: boolean }> {
    const { scopeType, scopeId, changes } = policyChanges(body);
    const result = await upsertRacing(this.db, async (trx) => {
      await requireServer(trx, body.server_id);
      if (scopeType !== null) await requireScope(trx, scopeType, scopeId!);
      const repository = new McpToolPolicyRepository(trx);
      const storedType = scopeType ?? 'server';
      const storedId = scopeId ?? '';
      const existing = await repository.findByScope(body.server_id, body.tool_name, storedType, storedId);
      if (!(changes.is_ceiling ?? existing?.is_ceiling ?? false))
        await requireWithinCeilings(repository, body.server_id, body.tool_name, changes);
      const now = this.clock.now();
      if (existing) {
        await repository.update(existing.policy_id, changes, now);
        const after = (await repository.get(existing.policy_id))!;
        await appendAudit(trx, context, await policyEntry(trx, 'update', existing, after), now);
        return { id: existing.policy_id, created: false };
      }
      const id = newId('mcpp');
      await repository.insert(
        {
          policy_id: id,
          server_id: body.server_id,
          tool_name: body.tool_name,
          scope_type: storedType,
          scope_id: storedId,
          enabled: changes.enabled ?? true,
          require_approval: changes.require_approval ?? 'never',
          max_rpm: changes.max_rpm ?? null,
          max_concurrency: changes.max_concurrency ?? null,
          result_cache_ttl_seconds: changes.result_cache_ttl_seconds ?? null,
          max_total_execution_time_ms: changes.max_total_execution_time_ms ?? null,
          is_ceiling: changes.is_ceiling ?? false,
        },
        now,
      );
      const after = (await repository.get(id))!;
      await appendAudit(trx, context, await policyEntry(trx, 'create', null, after), now);
      return { id, created: true };
    });
    await this.catalog.changed();
    const policy = (await new McpToolPolicyRepository(this.db).get(result.id))!;
    return { policy: policyView(policy), created: result.created };
  }

  async listPolicies(page: PageRequest, filter: McpPolicyFilter): Promise<Page<PolicyView>> {
    const result = await new McpToolPolicyRepository(this.db).list(page, filter);
    return { items: result.items.map(policyView), total: result.total };
  }

  async deletePolicy(policyId: string, context: AuditContext): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const repository = new McpToolPolicyRepository(trx);
      const before = await repository.get(policyId);
      if (!before) throw errors.notFound('MCP tool policy', policyId);
      const audit = await policyEntry(trx, 'delete', before, null);
      if (!(await repository.delete(policyId))) throw errors.notFound('MCP tool policy', policyId);
      await appendAudit(trx, context, audit, this.clock.now());
    });
    await this.catalog.changed();
  }
}

/** A policy body's scope and the fields it sets (omitted ones keep their value on update). */
function policyChanges(body: McpToolPolicyBody) {
  const scopeType = body.scope_type ?? null;
  const scopeId = body.scope_id ?? null;
  if (scopeType === null && scopeId !== null) {
    throw errors.invalidRequest('scope_type: is required when scope_id is given.', 'scope_type');
  }
  if (scopeType !== null && scopeId === null) {
    throw errors.invalidRequest(`scope_id: is required when scope_type is ${scopeType}.`, 'scope_id');
  }
  if (scopeType !== null && body.is_ceiling === true) {
    throw errors.invalidRequest(
      'is_ceiling: only a server-wide policy (without scope_type and scope_id) can be a ceiling.',
      'is_ceiling',
    );
  }
  const changes: McpPolicyChanges = {};
  for (const name of [
    'enabled',
    'require_approval',
    'max_rpm',
    'max_concurrency',
    'result_cache_ttl_seconds',
    'max_total_execution_time_ms',
    'is_ceiling',
  ] as const) {
    if (body[name] !== undefined) (changes as Record<string, unknown>)[name] = body[name];
  }
  return { scopeType, scopeId, changes };
}

/**
 * A policy that is not itself a ceiling may not set a field looser than a server-wide ceiling of its
 * tool or of `*` (issue 25): 403 naming the field. Fields it leaves out are bounded when a call resolves.
 */
async function requireWithinCeilings(
  repository: McpToolPolicyRepository,
  serverId: string,
  toolName: string,
  changes: Partial<McpPolicyLimits>,
): Promise<void> {
  for (const tool of new Set([toolName, '*'])) {
    const ceiling = await repository.findByScope(serverId, tool, 'server', '');
    if (!ceiling?.is_ceiling) continue;
    const loosened = loosenedField(changes, ceiling);
    if (loosened) throw errors.belowPolicyCeiling(loosened.field, loosened.reason);
  }
}

type Scoped = { scope_type: string; scope_id: string };

/** A binding's entry; it belongs to the organization of the scope it names. */
async function bindingEntry(
  trx: Transaction,
  verb: 'create' | 'update' | 'delete',
  before: (Scoped & { binding_id: string }) | null,
  after: (Scoped & { binding_id: string }) | null,
): Promise<AuditChange> {
  const target = (after ?? before)!;
  return {
    action: `mcp_binding.${verb}`,
    targetType: 'mcp_binding',
    targetId: target.binding_id,
    organizationId: await organizationOfScope(trx, target),
    before,
    after,
  };
}

/** A policy's entry; a server-wide policy belongs to no organization. */
async function policyEntry(
  trx: Transaction,
  verb: 'create' | 'update' | 'delete',
  before: (Scoped & { policy_id: string }) | null,
  after: (Scoped & { policy_id: string }) | null,
): Promise<AuditChange> {
  const target = (after ?? before)!;
  return {
    action: `mcp_policy.${verb}`,
    targetType: 'mcp_policy',
    targetId: target.policy_id,
    organizationId: await organizationOfScope(trx, target),
    before,
    after,
  };
}

function organizationOfScope(trx: Transaction, scoped: Scoped): Promise<string | null> {
  return organizationOfTarget(trx, { kind: 'scope', scopeType: scoped.scope_type, scopeId: scoped.scope_id });
}

async function requireServer(trx: Transaction, serverId: string): Promise<void> {
  if (!(await new McpServerRepository(trx).get(serverId))) {
    throw missingReference('server_id', 'MCP server', serverId);
  }
}

async function requireScope(trx: Transaction, scopeType: string, scopeId: string): Promise<void> {
  const exists =
    scopeType === 'organization'
      ? await new OrganizationRepository(trx).get(scopeId)
      : scopeType === 'team'
        ? await new TeamRepository(trx).get(scopeId)
        : await new ApiKeyRepository(trx).get(scopeId);
  if (!exists) throw missingReference('scope_id', scopeType === 'api_key' ? 'API key' : scopeType, scopeId);
}

/** The spec: a binding or policy naming an unknown server, team or key is 404 (param names the field). */
function missingReference(field: string, resource: string, id: string): GatewayError {
  const error = errors.notFound(resource, id);
  return new GatewayError({
    status: error.status,
    type: error.type,
    code: error.code,
    message: `${field}: ${error.message}`,
    param: field,
  });
}

/**
 * Runs a find-then-insert upsert in a transaction. When a concurrent identical request inserted the
 * same natural key first (the unique constraint refuses ours), the upsert runs once more and updates.
 */
async function upsertRacing<T>(
  db: Kysely<DatabaseSchema>,
  work: (trx: Transaction) => Promise<T>,
): Promise<T> {
  try {
    return await db.transaction().execute(work);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    return db.transaction().execute(work);
  }
}
