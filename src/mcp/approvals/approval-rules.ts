/**
 * The approval state table of the spec as pure functions of the stored request and the time: the
 * windows (pending 24 h, approval usable 15 min, rejection 15 min), the status shown to people, what
 * an identical tools/call must do next, and who may approve it (four-eyes).
 */
import { LINEAGE_OVERFLOW } from '../../identity/key-lineage.ts';
import type {
  ApprovalStatus,
  ApprovalWindows,
  McpApprovalRecord,
} from '../../store/db/repositories/mcp-approval-repository.ts';

export const PENDING_TTL_MS = 24 * 60 * 60 * 1000;
export const APPROVAL_USABLE_MS = 15 * 60 * 1000;
export const REJECTION_APPLIES_MS = 15 * 60 * 1000;

export function windowsAt(now: number): ApprovalWindows {
  return { pendingSince: now - PENDING_TTL_MS, approvedSince: now - APPROVAL_USABLE_MS };
}

/** The status a person sees: pending past 24 h and approvals unused past 15 min show as expired. */
export function visibleStatus(record: McpApprovalRecord, now: number): ApprovalStatus {
  if (record.status === 'pending' && now - record.created_at >= PENDING_TTL_MS) return 'expired';
  if (
    record.status === 'approved' &&
    record.consumed_at === null &&
    record.decided_at !== null &&
    now - record.decided_at >= APPROVAL_USABLE_MS
  ) {
    return 'expired';
  }
  return record.status;
}

/** When a decided approval stops being usable (or a rejection stops applying). */
export function decisionWindowEnd(record: McpApprovalRecord): number | null {
  if (record.decided_at === null) return null;
  return record.decided_at + (record.status === 'rejected' ? REJECTION_APPLIES_MS : APPROVAL_USABLE_MS);
}

export type NextStep =
  /** No usable request: create a pending one and answer -32008. */
  | { kind: 'create' }
  /** A pending request exists for this call: answer -32008 with its id. */
  | { kind: 'wait'; approvalRequestId: string }
  /** Rejected within 15 minutes: answer -32009 with its id. */
  | { kind: 'rejected'; approvalRequestId: string }
  /** Approved within 15 minutes and unused: consume it, then run the tool once. */
  | { kind: 'consume'; approvalRequestId: string };

/** Requests created at or before this instant can no longer apply (pending expired, decisions lapsed). */
export function oldestRelevantCreation(now: number): number {
  return now - PENDING_TTL_MS - Math.max(APPROVAL_USABLE_MS, REJECTION_APPLIES_MS);
}

/**
 * What the identical call does next, given its recent requests. Usually there is one; when racing
 * first calls created several, an active rejection wins, then a usable approval (whichever request an
 * administrator decided), then the newest pending request.
 */
export function nextStep(requests: readonly McpApprovalRecord[], now: number): NextStep {
  const steps = requests.map((request) => stepOf(request, now));
  return (
    steps.find((step) => step.kind === 'rejected') ??
    steps.find((step) => step.kind === 'consume') ??
    steps.find((step) => step.kind === 'wait') ?? { kind: 'create' }
  );
}

function stepOf(request: McpApprovalRecord, now: number): NextStep {
  const id = request.approval_request_id;
  switch (visibleStatus(request, now)) {
    case 'pending':
      return { kind: 'wait', approvalRequestId: id };
    case 'rejected':
      return now - (request.decided_at ?? 0) < REJECTION_APPLIES_MS
        ? { kind: 'rejected', approvalRequestId: id }
        : { kind: 'create' };
    case 'approved':
      return request.consumed_at === null ? { kind: 'consume', approvalRequestId: id } : { kind: 'create' };
    case 'expired':
      return { kind: 'create' };
  }
}

/** Who decides: the master key, or an administrator with everyone behind the key they decide with. */
export type Approver = { kind: 'master' } | { kind: 'user'; people: ReadonlySet<string> };

/**
 * Four-eyes (issues 9 and 25): an administrator may approve a call only when nobody behind the calling
 * key (its owner, its creator, whoever created the key that created it …) is also behind the approving
 * key (the approver, who created the approver's key …). So nobody approves a call made with a key they
 * created or that was created with one, nor with a key that the caller's side created for them. A
 * lineage cut at its bound may hide anyone: only the master key approves through it. The master key,
 * the operator's own credential, is not a person and is not bound by the rule.
 */
export function mayApprove(approver: Approver, callPeople: ReadonlySet<string>): boolean {
  if (approver.kind === 'master') return true;
  if (callPeople.has(LINEAGE_OVERFLOW) || approver.people.has(LINEAGE_OVERFLOW)) return false;
  for (const person of approver.people) if (callPeople.has(person)) return false;
  return true;
}
