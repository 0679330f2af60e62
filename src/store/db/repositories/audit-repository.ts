/**
 * Persistence of the audit log: entries are appended in the transaction of the change they record (the
 * caller passes that transaction), secrets redacted here so no caller can forget; listed newest first
 * with an opaque cursor over (created_at, audit_id); deleted only by retention.
 */
import type { Kysely, SelectQueryBuilder } from 'kysely';
import { newId } from '../../../lib/random.ts';
import { redactSecrets } from '../audit-redaction.ts';
import type { AuditLogTable, DatabaseSchema } from '../tables.ts';

/** The stable verb set (docs/audit.md): `<target_type>.<verb>`. */
export const AUDIT_ACTIONS = [
  'organization.create',
  'organization.update',
  'organization.delete',
  'team.create',
  'team.update',
  'team.delete',
  'user.create',
  'user.update',
  'user.delete',
  'key.create',
  'key.update',
  'key.delete',
  'mcp_server.create',
  'mcp_server.update',
  'mcp_server.delete',
  'mcp_binding.create',
  'mcp_binding.update',
  'mcp_binding.delete',
  'mcp_policy.create',
  'mcp_policy.update',
  'mcp_policy.delete',
  'approval.approve',
  'approval.reject',
  'tier_policy.create',
  'tier_policy.update',
  'tier_policy.delete',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_TARGET_TYPES = [
  'organization',
  'team',
  'user',
  'key',
  'mcp_server',
  'mcp_binding',
  'mcp_policy',
  'approval',
  'tier_policy',
] as const;

export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];

/** Who made a change and in which request; threaded from the admin route into the use case. */
export interface AuditContext {
  /** `master` or `user:<user_id>`. */
  actor: string;
  actorKeyId: string | null;
  requestId: string;
}

export interface AuditChange {
  action: AuditAction;
  targetType: AuditTargetType;
  targetId: string;
  organizationId: string | null;
  /** The target before the change (null when it did not exist) and after (null when deleted). */
  before: object | null;
  after: object | null;
}

export interface AuditRecord {
  audit_id: string;
  created_at: number;
  actor: string;
  actor_key_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  organization_id: string | null;
  request_id: string;
  before: unknown;
  after: unknown;
}

export interface AuditFilter {
  /** Epoch milliseconds, inclusive. */
  from?: number | undefined;
  /** Epoch milliseconds, exclusive. */
  to?: number | undefined;
  actor?: string | undefined;
  action?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  organizationId?: string | undefined;
}

export interface AuditPage {
  items: AuditRecord[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

type AuditQuery = SelectQueryBuilder<DatabaseSchema, 'audit_log', object>;

export class AuditRepository {
  private readonly db: Kysely<DatabaseSchema>;

  /** `db` is the transaction of the change when appending. */
  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async append(context: AuditContext, change: AuditChange, at: number): Promise<string> {
    const auditId = newId('aud');
    await this.db
      .insertInto('audit_log')
      .values({
        audit_id: auditId,
        created_at: at,
        actor: context.actor,
        actor_key_id: context.actorKeyId,
        action: change.action,
        target_type: change.targetType,
        target_id: change.targetId,
        organization_id: change.organizationId,
        request_id: context.requestId,
        before: snapshot(change.before),
        after: snapshot(change.after),
      })
      .execute();
    return auditId;
  }

  /** A page, newest first; `cursor` is one this method returned (see decodeAuditCursor). */
  async list(
    filter: AuditFilter,
    page: { limit: number; cursor?: AuditCursor | undefined },
  ): Promise<AuditPage> {
    let query = filtered(this.db.selectFrom('audit_log'), filter);
    const { cursor } = page;
    if (cursor) {
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '<', cursor.createdAt),
          eb.and([eb('created_at', '=', cursor.createdAt), eb('audit_id', '<', cursor.auditId)]),
        ]),
      );
    }
    const rows = await query
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('audit_id', 'desc')
      .limit(page.limit + 1)
      .execute();
    const items = rows.slice(0, page.limit).map(toRecord);
    const last = items.at(-1);
    return {
      items,
      nextCursor: rows.length > page.limit && last ? encodeAuditCursor(last) : null,
    };
  }

  /** Retention: deletes the entries created before `cutoff` (epoch ms); returns how many. */
  async deleteBefore(cutoff: number): Promise<number> {
    const result = await this.db.deleteFrom('audit_log').where('created_at', '<', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

export interface AuditCursor {
  createdAt: number;
  auditId: string;
}

export function encodeAuditCursor(record: Pick<AuditRecord, 'created_at' | 'audit_id'>): string {
  return Buffer.from(JSON.stringify([record.created_at, record.audit_id])).toString('base64url');
}

/** The position a cursor names; undefined when it is not one encodeAuditCursor made. */
export function decodeAuditCursor(text: string): AuditCursor | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [createdAt, auditId] = value as [unknown, unknown];
    if (!Number.isSafeInteger(createdAt) || typeof auditId !== 'string' || auditId.length > 128)
      return undefined;
    return { createdAt: createdAt as number, auditId };
  } catch {
    return undefined;
  }
}

function filtered(query: AuditQuery, filter: AuditFilter): AuditQuery {
  let result = query;
  if (filter.from !== undefined) result = result.where('created_at', '>=', filter.from);
  if (filter.to !== undefined) result = result.where('created_at', '<', filter.to);
  if (filter.actor !== undefined) result = result.where('actor', '=', filter.actor);
  if (filter.action !== undefined) result = result.where('action', '=', filter.action);
  if (filter.targetType !== undefined) result = result.where('target_type', '=', filter.targetType);
  if (filter.targetId !== undefined) result = result.where('target_id', '=', filter.targetId);
  if (filter.organizationId !== undefined)
    result = result.where('organization_id', '=', filter.organizationId);
  return result;
}

function snapshot(value: object | null): string | null {
  return value === null ? null : JSON.stringify(redactSecrets(value));
}

function toRecord(row: AuditLogTable): AuditRecord {
  return {
    ...row,
    before: row.before === null ? null : (JSON.parse(row.before) as unknown),
    after: row.after === null ? null : (JSON.parse(row.after) as unknown),
  };
}
