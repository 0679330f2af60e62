/**
 * The approval step of tools/call for tools whose policy says `require_approval: manual`: finds the
 * recent requests for the identical call and applies the state table. A usable approval is reserved
 * first and consumed only right before the tool runs (a conditional update, so concurrent identical
 * calls run it once), so a call refused by a later check does not use up its approval.
 */
import type { Kysely } from 'kysely';
import type { Caller } from '../../canonical/caller.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/random.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { McpApprovalRepository } from '../../store/db/repositories/mcp-approval-repository.ts';
import type { DatabaseSchema } from '../../store/db/tables.ts';
import { rpcErrors } from '../json-rpc-error.ts';
import { nextStep, oldestRelevantCreation, windowsAt } from './approval-rules.ts';

export interface ApprovalCall {
  fingerprint: string;
  serverId: string;
  toolName: string;
  caller: Caller;
  arguments: Readonly<Record<string, unknown>>;
  headerNames: readonly string[];
}

/** A usable approval found for a call; `consume` marks it used (or throws -32008 when another call won it). */
export interface ApprovalTicket {
  consume(): Promise<void>;
}

export class ApprovalGate {
  private readonly repository: McpApprovalRepository;
  private readonly clock: Clock;
  private readonly metrics: Metrics;

  constructor(options: { db: Kysely<DatabaseSchema>; clock: Clock; metrics: Metrics }) {
    this.repository = new McpApprovalRepository(options.db);
    this.clock = options.clock;
    this.metrics = options.metrics;
  }

  /** The usable approval of this call, not yet consumed; throws -32008 or -32009 when there is none. */
  async reserve(call: ApprovalCall): Promise<ApprovalTicket> {
    const approvalRequestId = await this.usableApproval(call);
    return { consume: () => this.consume(call, approvalRequestId, 1) };
  }

  private async usableApproval(call: ApprovalCall): Promise<string> {
    const now = this.clock.now();
    const recent = await this.repository.recentForCall(call.fingerprint, oldestRelevantCreation(now));
    const step = nextStep(recent, now);
    switch (step.kind) {
      case 'wait':
        throw rpcErrors.approvalRequired(step.approvalRequestId);
      case 'rejected':
        throw rpcErrors.approvalDenied(step.approvalRequestId);
      case 'create':
        throw rpcErrors.approvalRequired(await this.create(call, now));
      case 'consume':
        return step.approvalRequestId;
    }
  }

  private async consume(call: ApprovalCall, approvalRequestId: string, retries: number): Promise<void> {
    const now = this.clock.now();
    if (await this.repository.consume(approvalRequestId, now, windowsAt(now))) {
      this.metrics.mcpApprovals.inc({ status: 'consumed' });
      return;
    }
    if (retries === 0) throw rpcErrors.approvalRequired(await this.create(call, now));
    // An identical call consumed it first (or its window closed meanwhile): the state table decides
    // anew, which normally means a new request and -32008.
    return this.consume(call, await this.usableApproval(call), retries - 1);
  }

  private async create(call: ApprovalCall, now: number): Promise<string> {
    const id = newId('apr');
    await this.repository.insert({
      approval_request_id: id,
      server_id: call.serverId,
      tool_name: call.toolName,
      call_hash: call.fingerprint,
      key_id: call.caller.keyId,
      key_owner_user_id: call.caller.userId,
      arguments: { ...call.arguments },
      forwarded_header_names: [...call.headerNames],
      status: 'pending',
      created_at: now,
      decided_at: null,
      decided_by: null,
      decision_comment: null,
      consumed_at: null,
    });
    this.metrics.mcpApprovals.inc({ status: 'pending' });
    return id;
  }
}
