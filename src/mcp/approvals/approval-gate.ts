/**
 * The approval step of tools/call for tools whose policy says `require_approval: manual`: finds the
 * newest request for the identical call and applies the state table. A usable approval is consumed in
 * the database before the tool runs (a conditional update, so concurrent identical calls run it once).
 */
import type { Kysely } from 'kysely';
import type { Caller } from '../../canonical/caller.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/random.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { McpApprovalRepository } from '../../store/db/repositories/mcp-approval-repository.ts';
import type { DatabaseSchema } from '../../store/db/tables.ts';
import { rpcErrors } from '../json-rpc-error.ts';
import { nextStep, windowsAt } from './approval-rules.ts';

export interface ApprovalCall {
  fingerprint: string;
  serverId: string;
  toolName: string;
  caller: Caller;
  arguments: Readonly<Record<string, unknown>>;
  headerNames: readonly string[];
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

  /** Returns when the call may run (its approval is now consumed); throws -32008 or -32009 otherwise. */
  async admit(call: ApprovalCall): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const now = this.clock.now();
      const step = nextStep(await this.repository.latestForCall(call.fingerprint), now);
      switch (step.kind) {
        case 'wait':
          throw rpcErrors.approvalRequired(step.approvalRequestId);
        case 'rejected':
          throw rpcErrors.approvalDenied(step.approvalRequestId);
        case 'consume':
          if (await this.repository.consume(step.approvalRequestId, now, windowsAt(now))) {
            this.metrics.mcpApprovals.inc({ status: 'consumed' });
            return;
          }
          continue; // another identical call consumed it first: look again
        case 'create':
          throw rpcErrors.approvalRequired(await this.create(call, now));
      }
    }
    throw rpcErrors.approvalRequired(await this.create(call, this.clock.now()));
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
