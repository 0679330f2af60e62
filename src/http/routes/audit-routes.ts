/** GET /ui/api/audit: the audit log of admin changes, newest first, filtered, with cursor pagination. */
import Type from 'typebox';
import { errors } from '../../lib/error-catalogue.ts';
import {
  AUDIT_ACTIONS,
  AUDIT_TARGET_TYPES,
  type AuditFilter,
  type AuditRecord,
  decodeAuditCursor,
} from '../../store/db/repositories/audit-repository.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';

const Text = Type.String({ minLength: 1, maxLength: 256 });
const INSTANT = 'An ISO 8601 date-time (2027-01-31T00:00:00Z) or epoch milliseconds.';
const Instant = (bound: string) =>
  Type.String({ minLength: 1, maxLength: 64, description: `${bound} ${INSTANT}` });

export const AuditQuery = Type.Object({
  from: Type.Optional(Instant('Inclusive.')),
  to: Type.Optional(Instant('Exclusive.')),
  actor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: '`master` or `user:<user_id>`.' }),
  ),
  action: Type.Optional(Type.Enum([...AUDIT_ACTIONS])),
  target_type: Type.Optional(Type.Enum([...AUDIT_TARGET_TYPES])),
  target_id: Type.Optional(Text),
  organization_id: Type.Optional(Text),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'next_cursor of a page.' })),
});

const AuditEntryView = Type.Object({
  object: Type.Literal('audit_entry'),
  audit_id: Type.String(),
  created_at: Type.String(),
  actor: Type.String(),
  actor_key_id: Type.Union([Type.String(), Type.Null()]),
  action: Type.String(),
  target_type: Type.String(),
  target_id: Type.String(),
  organization_id: Type.Union([Type.String(), Type.Null()]),
  request_id: Type.String(),
  before: Type.Unknown({ description: 'The target before the change (secrets "REDACTED"); null on create.' }),
  after: Type.Unknown({ description: 'The target after the change (secrets "REDACTED"); null on delete.' }),
});

const AuditListView = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(AuditEntryView),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
  limit: Type.Integer(),
});

export function registerAuditRoutes(app: App, deps: Pick<AppDependencies, 'audit'>): void {
  app.get(
    '/ui/api/audit',
    {
      onRequest: app.authenticateAdmin,
      schema: {
        tags: ['admin'],
        security: adminSecurity,
        summary: 'The audit log of admin changes, newest first (organization administrators: theirs only).',
        querystring: AuditQuery,
        response: { 200: AuditListView, ...errorResponses },
      },
    },
    async (request) => {
      const { limit = 100, cursor } = request.query;
      const position = cursor === undefined ? undefined : decodeAuditCursor(cursor);
      if (cursor !== undefined && !position)
        throw errors.invalidRequest('cursor: must be the next_cursor of an earlier page.', 'cursor');
      const page = await deps.audit.list(auditFilter(request.query), { limit, cursor: position });
      return {
        object: 'list' as const,
        data: page.items.map(entryView),
        has_more: page.nextCursor !== null,
        next_cursor: page.nextCursor,
        limit,
      };
    },
  );
}

/** The repository filter of the audit query (also read by the CSV export). */
export function auditFilter(query: Omit<Type.Static<typeof AuditQuery>, 'limit' | 'cursor'>): AuditFilter {
  return {
    from: instant(query.from, 'from'),
    to: instant(query.to, 'to'),
    actor: query.actor,
    action: query.action,
    targetType: query.target_type,
    targetId: query.target_id,
    organizationId: query.organization_id,
  };
}

function instant(text: string | undefined, field: string): number | undefined {
  if (text === undefined) return undefined;
  const at = /^\d{1,16}$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(at) || at < 0 || at > 8.64e15)
    throw errors.invalidRequest(
      `${field}: must be an ISO 8601 date-time (e.g. 2027-01-31T00:00:00Z) or epoch milliseconds.`,
      field,
    );
  return at;
}

function entryView(record: AuditRecord) {
  return { object: 'audit_entry' as const, ...record, created_at: new Date(record.created_at).toISOString() };
}
