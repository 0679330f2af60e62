/**
 * The approval desk of the admin API: lists requests with the status a person sees and what the viewer
 * may do with each, and records decisions (four-eyes along the keys' lineage: approval-rules.ts),
 * each audited in its transaction as `approval.approve` or `approval.reject` (docs/audit.md).
 */
import type { Kysely } from 'kysely';
import { type AuditContext, appendAudit, organizationOfTarget } from '../../identity/admin-audit.ts';
import { type AdminActor, actorLabel } from '../../identity/authenticator.ts';
import { lineageOf, peopleBehind } from '../../identity/key-lineage.ts';
import type { Clock } from '../../lib/clock.ts';
import { errors } from '../../lib/error-catalogue.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { ApiKeyRepository } from '../../store/db/repositories/api-key-repository.ts';
import type { Page, PageRequest } from '../../store/db/repositories/limit-columns.ts';
import {
  type ApprovalStatus,
  type McpApprovalRecord,
  McpApprovalRepository,
} from '../../store/db/repositories/mcp-approval-repository.ts';
import type { DatabaseSchema } from '../../store/db/tables.ts';
import { mcpAdminErrors } from '../admin/mcp-admin-errors.ts';
import type { McpCatalog } from '../mcp-catalog.ts';
import { decisionWindowEnd, mayApprove, PENDING_TTL_MS, visibleStatus, windowsAt } from './approval-rules.ts';

export interface ApprovalView {
  approval_request_id: string;
  server_id: string;
  server_key: string | null;
  tool_name: string;
  arguments: Record<string, unknown>;
  forwarded_header_names: string[];
  key_id: string | null;
  key_owner_user_id: string | null;
  status: ApprovalStatus;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  decision_comment: string | null;
  consumed_at: string | null;
  /** Until when an approval is usable or a rejection applies. */
  decision_applies_until: string | null;
  capabilities: { can_decide: boolean; can_approve: boolean };
}

export interface DecisionBody {
  status: 'approved' | 'rejected';
  decision_comment?: string | undefined;
}

export class ApprovalAdmin {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly repository: McpApprovalRepository;
  private readonly keys: ApiKeyRepository;
  private readonly clock: Clock;
  private readonly metrics: Metrics;
  private readonly catalog: McpCatalog;

  constructor(options: { db: Kysely<DatabaseSchema>; clock: Clock; metrics: Metrics; catalog: McpCatalog }) {
    this.db = options.db;
    this.repository = new McpApprovalRepository(options.db);
    this.keys = new ApiKeyRepository(options.db);
    this.clock = options.clock;
    this.metrics = options.metrics;
    this.catalog = options.catalog;
  }

  async list(
    page: PageRequest,
    filter: {
      serverId?: string | undefined;
      status?: ApprovalStatus | undefined;
      organizationId?: string | undefined;
    },
    viewer: AdminActor,
  ): Promise<Page<ApprovalView>> {
    const now = this.clock.now();
    const result = await this.repository.list(page, filter, windowsAt(now));
    const people = await this.peopleBehindKeys(result.items, viewer);
    return {
      items: result.items.map((record) => this.view(record, viewer, now, people)),
      total: result.total,
    };
  }

  async decide(
    approvalRequestId: string,
    body: DecisionBody,
    actor: AdminActor,
    context: AuditContext,
  ): Promise<ApprovalView> {
    const now = this.clock.now();
    const record = await this.repository.get(approvalRequestId);
    if (!record) throw errors.notFound('approval request', approvalRequestId);
    const status = visibleStatus(record, now);
    if (status === 'expired' && record.status === 'pending') throw mcpAdminErrors.expired(approvalRequestId);
    if (status !== 'pending') throw mcpAdminErrors.notPending(approvalRequestId);
    const people = await this.peopleBehindKeys([record], actor);
    if (body.status === 'approved' && !approvable(actor, record, people))
      throw mcpAdminErrors.ownerMayNotApprove();
    const decided = await this.db.transaction().execute(async (trx) => {
      const repository = new McpApprovalRepository(trx);
      const decision = {
        status: body.status,
        decidedBy: actorLabel(actor),
        comment: body.decision_comment ?? null,
        at: now,
      };
      if (!(await repository.decide(approvalRequestId, decision, windowsAt(now)))) return false;
      const after = (await repository.get(approvalRequestId))!;
      await appendAudit(
        trx,
        context,
        {
          action: body.status === 'approved' ? 'approval.approve' : 'approval.reject',
          targetType: 'approval',
          targetId: approvalRequestId,
          organizationId: await organizationOfTarget(trx, { kind: 'approval', id: approvalRequestId }),
          before: decisionSnapshot(record),
          after: decisionSnapshot(after),
        },
        now,
      );
      return true;
    });
    if (!decided) throw mcpAdminErrors.notPending(approvalRequestId); // decided concurrently
    this.metrics.mcpApprovals.inc({ status: body.status });
    return this.view((await this.repository.get(approvalRequestId))!, actor, now, people);
  }

  /** Everyone behind the calling keys of these requests and behind the viewer's key, by key id. */
  private async peopleBehindKeys(
    records: readonly McpApprovalRecord[],
    viewer: AdminActor,
  ): Promise<PeopleByKey> {
    const keyIds = records.flatMap((record) => record.key_id ?? []);
    if (viewer.kind === 'user') keyIds.push(viewer.keyId);
    const lineages = await this.keys.lineages(keyIds);
    return new Map([...lineages].map(([keyId, key]) => [keyId, peopleBehind(key.user_id, lineageOf(key))]));
  }

  private view(
    record: McpApprovalRecord,
    viewer: AdminActor,
    now: number,
    people: PeopleByKey,
  ): ApprovalView {
    const status = visibleStatus(record, now);
    const canDecide = status === 'pending';
    const windowEnd = decisionWindowEnd(record);
    return {
      approval_request_id: record.approval_request_id,
      server_id: record.server_id,
      server_key: this.catalog.snapshot.byId.get(record.server_id)?.record.server_key ?? null,
      tool_name: record.tool_name,
      arguments: record.arguments,
      forwarded_header_names: record.forwarded_header_names,
      key_id: record.key_id,
      key_owner_user_id: record.key_owner_user_id,
      status,
      created_at: iso(record.created_at),
      expires_at: iso(record.created_at + PENDING_TTL_MS),
      decided_at: record.decided_at === null ? null : iso(record.decided_at),
      decided_by: record.decided_by,
      decision_comment: record.decision_comment,
      consumed_at: record.consumed_at === null ? null : iso(record.consumed_at),
      decision_applies_until: windowEnd === null ? null : iso(windowEnd),
      capabilities: { can_decide: canDecide, can_approve: canDecide && approvable(viewer, record, people) },
    };
  }
}

type PeopleByKey = ReadonlyMap<string, ReadonlySet<string>>;

/** Four-eyes (approval-rules.ts): the people behind the calling key against those behind the actor's. */
function approvable(actor: AdminActor, record: McpApprovalRecord, people: PeopleByKey): boolean {
  if (actor.kind !== 'user') return mayApprove({ kind: 'master' }, new Set());
  const callPeople = new Set(record.key_id ? (people.get(record.key_id) ?? []) : []);
  // Whoever owned the key when the call was made is behind it too, even if the key moved since.
  if (record.key_owner_user_id !== null) callPeople.add(`user:${record.key_owner_user_id}`);
  const approverPeople = new Set(people.get(actor.keyId) ?? []);
  approverPeople.add(actorLabel(actor));
  return mayApprove({ kind: 'user', people: approverPeople }, callPeople);
}

/** What an audit entry keeps of an approval request: the decision, not the call's arguments. */
function decisionSnapshot(record: McpApprovalRecord) {
  const { arguments: _arguments, forwarded_header_names: _headers, call_hash: _hash, ...decision } = record;
  return decision;
}

function iso(milliseconds: number): string {
  return new Date(milliseconds).toISOString();
}
