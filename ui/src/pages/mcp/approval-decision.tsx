/**
 * Approve or reject one pending approval request, with a comment. Four-eyes: Approve is disabled, with
 * the reason beside it, when the viewer owns or created the calling key (the gateway refuses it with 403).
 */
import { type QueryClient, useMutation, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { useSession } from '../../auth/session.tsx';
import { Field } from '../../components/field.tsx';
import { ErrorNotice } from '../../components/query-state.tsx';
import { approvalToolName, type ListAnswer, type McpApproval } from './mcp-types.ts';

export const approvalsKey = ['mcp', 'approvals'] as const;
export const pendingKey = [...approvalsKey, 'pending'] as const;
export const decidedKey = [...approvalsKey, 'decided'] as const;

/** How many decisions the inbox shows (the newest). */
export const DECISIONS_SHOWN = 50;

export const SELF_APPROVAL_REASON =
  'Four-eyes: you are behind the key that made this call (you own or created it, directly or through another key), or its side created your key. Another administrator must approve it; you may reject it.';

/** Moves a decided request out of the pending list and onto the decisions at once (the poll confirms). */
function recordDecision(queryClient: QueryClient, decided: McpApproval) {
  const id = decided.approval_request_id;
  const without = (list: ListAnswer<McpApproval>) =>
    list.data.filter((item) => item.approval_request_id !== id);
  queryClient.setQueriesData<ListAnswer<McpApproval>>({ queryKey: pendingKey }, (list) =>
    list ? { ...list, data: without(list) } : list,
  );
  queryClient.setQueriesData<ListAnswer<McpApproval>>({ queryKey: decidedKey }, (list) => {
    if (!list) return list;
    const others = without(list);
    const total = list.total + (others.length === list.data.length ? 1 : 0);
    return { ...list, data: [decided, ...others].slice(0, DECISIONS_SHOWN), total };
  });
}

/**
 * Sends a decision on request `id` with the comment typed so far, records it in the lists, then tells
 * `onDecided` (before the row leaves the table, so it can still see where the focus is).
 */
function useDecision(id: string, comment: string, onDecided: (decided: McpApproval) => void) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (status: 'approved' | 'rejected') =>
      api.post<McpApproval>(`/mcp-approval-requests/${encodeURIComponent(id)}/decision`, {
        status,
        ...(comment.trim() === '' ? {} : { decision_comment: comment.trim() }),
      }),
    onSuccess: (decided) => {
      onDecided(decided);
      recordDecision(queryClient, decided);
    },
    // Not awaited: the buttons are busy while the decision is sent, not while the lists reload after it.
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: approvalsKey });
    },
  });
}

/** `hadFocus`: the focus was in this row's controls, which leave with the row. */
export type OnDecided = (decided: McpApproval, hadFocus: boolean) => void;

export function DecisionControls(props: { approval: McpApproval; onDecided: OnDecided }) {
  const { approval } = props;
  const [comment, setComment] = useState('');
  const box = useRef<HTMLDivElement>(null);
  const tool = approvalToolName(approval);
  const id = approval.approval_request_id;
  const decide = useDecision(id, comment, (decided) =>
    props.onDecided(decided, box.current?.contains(document.activeElement) ?? false),
  );
  // Busy is aria-disabled, not disabled: the button the operator pressed keeps the keyboard focus.
  const busy = decide.isPending;
  const send = (status: 'approved' | 'rejected') => {
    if (!busy) decide.mutate(status);
  };
  const reasonId = `approve-reason-${id}`;
  const canApprove = approval.capabilities.can_approve;
  return (
    <div className="decision" ref={box}>
      <Field
        label={`Comment for ${tool}`}
        value={comment}
        maxLength={2000}
        onChange={(event) => setComment(event.target.value)}
      />
      <div className="decision-buttons">
        <button
          type="button"
          disabled={!canApprove}
          aria-disabled={busy || undefined}
          aria-describedby={canApprove ? undefined : reasonId}
          onClick={() => send('approved')}
        >
          {busy && decide.variables === 'approved' ? 'Approving…' : 'Approve'}
        </button>
        <button
          type="button"
          className="button-danger"
          disabled={!approval.capabilities.can_decide}
          aria-disabled={busy || undefined}
          onClick={() => send('rejected')}
        >
          {busy && decide.variables === 'rejected' ? 'Rejecting…' : 'Reject'}
        </button>
      </div>
      {!canApprove && (
        <p className="field-hint" id={reasonId}>
          {approval.capabilities.can_decide ? SELF_APPROVAL_REASON : 'This request can no longer be decided.'}
        </p>
      )}
      {decide.error && <ErrorNotice error={decide.error} title="Decision not recorded" />}
    </div>
  );
}
