/**
 * Persistence of MCP approval requests. `expired` is never stored: it is derived from the time, so the
 * caller passes the thresholds (`pendingSince`: requests created after it are still pending;
 * `approvedSince`: approvals decided after it are still usable).
 */
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { DatabaseSchema, McpApprovalRequestsTable } from '../tables.ts';
import type { Page, PageRequest } from './limit-columns.ts';
import { keysOf } from './organization-scope.ts';

export type StoredApprovalStatus = 'pending' | 'approved' | 'rejected';
export type ApprovalStatus = StoredApprovalStatus | 'expired';

export interface McpApprovalRecord {
  approval_request_id: string;
  server_id: string;
  tool_name: string;
  call_hash: string;
  key_id: string | null;
  key_owner_user_id: string | null;
  arguments: Record<string, unknown>;
  forwarded_header_names: string[];
  status: StoredApprovalStatus;
  created_at: number;
  decided_at: number | null;
  decided_by: string | null;
  decision_comment: string | null;
  consumed_at: number | null;
}

export interface ApprovalWindows {
  /** Pending requests created at or before this instant have expired. */
  pendingSince: number;
  /** Approvals decided at or before this instant are no longer usable. */
  approvedSince: number;
}

export interface ApprovalFilter {
  serverId?: string | undefined;
  /** Only calls made with keys of this organization (an organization administrator's view). */
  organizationId?: string | undefined;
  status?: ApprovalStatus | undefined;
}

/** Enough for every request of one call that can still apply (the state table creates few). */
const MAX_RECENT_FOR_CALL = 50;

type ApprovalQuery = SelectQueryBuilder<DatabaseSchema, 'mcp_approval_requests', object>;

export class McpApprovalRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async insert(record: McpApprovalRecord): Promise<void> {
    await this.db
      .insertInto('mcp_approval_requests')
      .values({
        ...record,
        arguments: JSON.stringify(record.arguments),
        forwarded_header_names: JSON.stringify(record.forwarded_header_names),
      })
      .execute();
  }

  async get(approvalRequestId: string): Promise<McpApprovalRecord | undefined> {
    const row = await this.db
      .selectFrom('mcp_approval_requests')
      .selectAll()
      .where('approval_request_id', '=', approvalRequestId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * The requests for an identical call created after `createdAfter`, newest first. Older ones can no
   * longer apply; a few can be live at once, because identical first calls that race each create one.
   */
  async recentForCall(callHash: string, createdAfter: number): Promise<McpApprovalRecord[]> {
    const rows = await this.db
      .selectFrom('mcp_approval_requests')
      .selectAll()
      .where('call_hash', '=', callHash)
      .where('created_at', '>', createdAfter)
      .orderBy('created_at', 'desc')
      .orderBy('approval_request_id', 'desc')
      .limit(MAX_RECENT_FOR_CALL)
      .execute();
    return rows.map(toRecord);
  }

  async list(
    page: PageRequest,
    filter: ApprovalFilter,
    windows: ApprovalWindows,
  ): Promise<Page<McpApprovalRecord>> {
    let query: ApprovalQuery = this.db.selectFrom('mcp_approval_requests');
    if (filter.serverId !== undefined) query = query.where('server_id', '=', filter.serverId);
    if (filter.organizationId !== undefined)
      query = query.where('key_id', 'in', keysOf(this.db, filter.organizationId));
    if (filter.status !== undefined) query = withStatus(query, filter.status, windows);
    const [rows, count] = await Promise.all([
      query
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('approval_request_id')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toRecord), total: Number(count.total) };
  }

  async countByStatus(serverId: string, windows: ApprovalWindows): Promise<Record<ApprovalStatus, number>> {
    const statuses: ApprovalStatus[] = ['pending', 'approved', 'rejected', 'expired'];
    const counts = await Promise.all(
      statuses.map(async (status) => {
        const row = await withStatus(
          this.db.selectFrom('mcp_approval_requests').where('server_id', '=', serverId),
          status,
          windows,
        )
          .select((eb) => eb.fn.countAll<number>().as('total'))
          .executeTakeFirstOrThrow();
        return [status, Number(row.total)] as const;
      }),
    );
    return Object.fromEntries(counts) as Record<ApprovalStatus, number>;
  }

  /** Decides a request that is still pending; false when it is not (any more). */
  async decide(
    approvalRequestId: string,
    decision: { status: 'approved' | 'rejected'; decidedBy: string; comment: string | null; at: number },
    windows: ApprovalWindows,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('mcp_approval_requests')
      .set({
        status: decision.status,
        decided_at: decision.at,
        decided_by: decision.decidedBy,
        decision_comment: decision.comment,
      })
      .where('approval_request_id', '=', approvalRequestId)
      .where('status', '=', 'pending')
      .where('created_at', '>', windows.pendingSince)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Marks a usable approval consumed. The condition makes it atomic: of concurrent identical calls,
   * exactly one sees `true` and runs the tool.
   */
  async consume(approvalRequestId: string, at: number, windows: ApprovalWindows): Promise<boolean> {
    const result = await this.db
      .updateTable('mcp_approval_requests')
      .set({ consumed_at: at })
      .where('approval_request_id', '=', approvalRequestId)
      .where('status', '=', 'approved')
      .where('consumed_at', 'is', null)
      .where('decided_at', '>', windows.approvedSince)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

function withStatus(query: ApprovalQuery, status: ApprovalStatus, windows: ApprovalWindows): ApprovalQuery {
  switch (status) {
    case 'pending':
      return query.where('status', '=', 'pending').where('created_at', '>', windows.pendingSince);
    case 'rejected':
      return query.where('status', '=', 'rejected');
    case 'approved':
      return query
        .where('status', '=', 'approved')
        .where((eb) =>
          eb.or([eb('consumed_at', 'is not', null), eb('decided_at', '>', windows.approvedSince)]),
        );
    case 'expired':
      return query.where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'pending'), eb('created_at', '<=', windows.pendingSince)]),
          eb.and([
            eb('status', '=', 'approved'),
            eb('consumed_at', 'is', null),
            eb('decided_at', '<=', windows.approvedSince),
          ]),
        ]),
      );
  }
}

function toRecord(row: McpApprovalRequestsTable): McpApprovalRecord {
  return {
    approval_request_id: row.approval_request_id,
    server_id: row.server_id,
    tool_name: row.tool_name,
    call_hash: row.call_hash,
    key_id: row.key_id,
    key_owner_user_id: row.key_owner_user_id,
    arguments: JSON.parse(row.arguments) as Record<string, unknown>,
    forwarded_header_names: JSON.parse(row.forwarded_header_names) as string[],
    status: row.status as StoredApprovalStatus,
    created_at: row.created_at,
    decided_at: row.decided_at,
    decided_by: row.decided_by,
    decision_comment: row.decision_comment,
    consumed_at: row.consumed_at,
  };
}
