/**
 * The approval inbox: pending tool calls (polled every 5 s) with their arguments and caller, approved or
 * rejected with a comment, and the recent decisions below. Four-eyes: Approve is disabled, with the
 * reason beside it, when the viewer owns or created the calling key (the gateway refuses it with 403).
 */
import { type QueryClient, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useSession } from '../../auth/session.tsx';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { Field, SelectField } from '../../components/field.tsx';
import { formatAge, formatTime } from '../../components/format.ts';
import { PolledState } from '../../components/polled-state.tsx';
import { EmptyState, ErrorNotice } from '../../components/query-state.tsx';
import { approvalToolName, type ListAnswer, type McpApproval } from './mcp-types.ts';
import { useServers } from './use-servers.ts';

export const APPROVALS_POLL_MS = 5_000;
const pendingKey = ['mcp', 'approvals', 'pending'] as const;
const recentKey = ['mcp', 'approvals', 'recent'] as const;

/** Arguments longer than this many characters start collapsed. */
const COLLAPSE_AFTER = 200;

export const SELF_APPROVAL_REASON =
  'You own or created the key that made this call: another administrator must approve it. You may reject it.';

function ArgumentsView(props: { approval: McpApproval }) {
  const text = JSON.stringify(props.approval.arguments, null, 2);
  if (text.length <= COLLAPSE_AFTER) return <pre>{text}</pre>;
  return (
    <details>
      <summary>Show arguments ({text.split('\n').length} lines)</summary>
      <pre>{text}</pre>
    </details>
  );
}

/** The calling key's name and team, when the viewer may read the key (else only its id is shown). */
function useCallerKey(keyId: string | null) {
  const { api } = useSession();
  return useQuery({
    queryKey: ['mcp-caller-key', keyId],
    queryFn: () => api.get<CallerKey>(`/keys/${encodeURIComponent(keyId ?? '')}`),
    enabled: keyId !== null,
    staleTime: 60_000,
    retry: false,
  });
}

interface CallerKey {
  key_id: string;
  key_name: string | null;
  team_id: string | null;
}

function Caller(props: { approval: McpApproval }) {
  const { approval } = props;
  const key = useCallerKey(approval.key_id).data;
  return (
    <dl className="caller">
      <dt>Key</dt>
      <dd>
        {approval.key_id ? <code>{approval.key_id}</code> : 'unknown'}
        {key?.key_name && <span className="cell-note">{key.key_name}</span>}
      </dd>
      {approval.key_owner_user_id && (
        <>
          <dt>User</dt>
          <dd>{approval.key_owner_user_id}</dd>
        </>
      )}
      {key?.team_id && (
        <>
          <dt>Team</dt>
          <dd>{key.team_id}</dd>
        </>
      )}
      {approval.forwarded_header_names.length > 0 && (
        <>
          <dt>Headers</dt>
          <dd>{approval.forwarded_header_names.join(', ')}</dd>
        </>
      )}
    </dl>
  );
}

/** Moves a decided request out of the pending list and onto the decisions at once (the poll confirms). */
function recordDecision(queryClient: QueryClient, decided: McpApproval) {
  const id = decided.approval_request_id;
  queryClient.setQueriesData<ListAnswer<McpApproval>>({ queryKey: pendingKey }, (list) =>
    list ? { ...list, data: list.data.filter((item) => item.approval_request_id !== id) } : list,
  );
  queryClient.setQueriesData<ListAnswer<McpApproval>>({ queryKey: recentKey }, (list) =>
    list
      ? { ...list, data: [decided, ...list.data.filter((item) => item.approval_request_id !== id)] }
      : list,
  );
}

function DecisionControls(props: { approval: McpApproval }) {
  const { approval } = props;
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [comment, setComment] = useState('');
  const tool = approvalToolName(approval);
  const id = approval.approval_request_id;
  const decide = useMutation({
    mutationFn: (status: 'approved' | 'rejected') =>
      api.post<McpApproval>(`/mcp-approval-requests/${encodeURIComponent(id)}/decision`, {
        status,
        ...(comment.trim() === '' ? {} : { decision_comment: comment.trim() }),
      }),
    onSuccess: (decided) => recordDecision(queryClient, decided),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['mcp', 'approvals'] }),
  });
  const reasonId = `approve-reason-${id}`;
  const canApprove = approval.capabilities.can_approve;
  return (
    <div className="decision">
      <Field
        label={`Comment for ${tool}`}
        value={comment}
        maxLength={2000}
        onChange={(event) => setComment(event.target.value)}
      />
      <div className="decision-buttons">
        <button
          type="button"
          disabled={!canApprove || decide.isPending}
          aria-describedby={canApprove ? undefined : reasonId}
          onClick={() => decide.mutate('approved')}
        >
          {decide.isPending && decide.variables === 'approved' ? 'Approving…' : 'Approve'}
        </button>
        <button
          type="button"
          className="button-danger"
          disabled={!approval.capabilities.can_decide || decide.isPending}
          onClick={() => decide.mutate('rejected')}
        >
          {decide.isPending && decide.variables === 'rejected' ? 'Rejecting…' : 'Reject'}
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

function pendingColumns(now: number): Column<McpApproval>[] {
  return [
    { header: 'Tool', cell: (approval) => <code>{approvalToolName(approval)}</code> },
    { header: 'Arguments', cell: (approval) => <ArgumentsView approval={approval} /> },
    { header: 'Caller', cell: (approval) => <Caller approval={approval} /> },
    {
      header: 'Age',
      cell: (approval) => <time dateTime={approval.created_at}>{formatAge(approval.created_at, now)}</time>,
    },
    { header: 'Expires', cell: (approval) => formatTime(approval.expires_at) },
    { header: 'Decision', cell: (approval) => <DecisionControls approval={approval} /> },
  ];
}

const statusNames: Record<McpApproval['status'], string> = {
  pending: 'Pending',
  approved: 'Approved',
  rejected: 'Rejected',
  expired: 'Expired',
};

const decidedColumns: Column<McpApproval>[] = [
  { header: 'Tool', cell: (approval) => <code>{approvalToolName(approval)}</code> },
  { header: 'Status', cell: (approval) => statusNames[approval.status] },
  { header: 'Decided by', cell: (approval) => approval.decided_by ?? '—' },
  { header: 'Comment', cell: (approval) => approval.decision_comment ?? '—' },
  { header: 'Decided', cell: (approval) => formatTime(approval.decided_at) },
  {
    header: 'Applies until',
    cell: (approval) =>
      approval.consumed_at
        ? `Used ${formatTime(approval.consumed_at)}`
        : formatTime(approval.decision_applies_until),
  },
  { header: 'Caller', cell: (approval) => <Caller approval={approval} /> },
];

/** `now` is injectable so tests fix the ages they read. */
export function ApprovalsTab(props: { now?: () => number }) {
  const { api } = useSession();
  const { servers } = useServers();
  const [serverId, setServerId] = useState('');
  const pending = useQuery({
    queryKey: [...pendingKey, serverId],
    queryFn: () =>
      api.get<ListAnswer<McpApproval>>('/mcp-approval-requests', {
        status: 'pending',
        server_id: serverId,
        limit: 500,
      }),
    refetchInterval: APPROVALS_POLL_MS,
  });
  const recent = useQuery({
    queryKey: [...recentKey, serverId],
    queryFn: () =>
      api.get<ListAnswer<McpApproval>>('/mcp-approval-requests', { server_id: serverId, limit: 50 }),
    refetchInterval: APPROVALS_POLL_MS,
  });
  // Reading dataUpdatedAt re-renders on every poll, so the ages move on even when nothing else changed.
  const now = props.now ? props.now() : Math.max(Date.now(), pending.dataUpdatedAt);
  return (
    <section aria-labelledby="approvals-title">
      <h2 id="approvals-title">Approval inbox</h2>
      <p className="muted">
        Calls of tools whose policy requires approval wait here for 24 hours. An approval lets the identical
        call run once within 15 minutes; a rejection refuses it for 15 minutes. Checked every 5 seconds.
      </p>
      <SelectField label="Server" value={serverId} onChange={(event) => setServerId(event.target.value)}>
        <option value="">All servers</option>
        {servers.map((server) => (
          <option key={server.server_id} value={server.server_id}>
            {server.name} ({server.server_key})
          </option>
        ))}
      </SelectField>
      <PolledState query={pending} what="pending approvals">
        {(answer) =>
          answer.data.length === 0 ? (
            <EmptyState title="No pending approvals">
              Calls of tools with a manual-approval policy will appear here.
            </EmptyState>
          ) : (
            <DataTable
              caption="Pending approvals"
              columns={pendingColumns(now)}
              rows={answer.data}
              rowKey={(approval) => approval.approval_request_id}
            />
          )
        }
      </PolledState>
      <h3>Recent decisions</h3>
      <PolledState query={recent} what="recent decisions">
        {(answer) => {
          const decided = answer.data.filter((approval) => approval.status !== 'pending');
          return decided.length === 0 ? (
            <p>No decisions yet.</p>
          ) : (
            <DataTable
              caption="Recent decisions"
              columns={decidedColumns}
              rows={decided}
              rowKey={(approval) => approval.approval_request_id}
            />
          );
        }}
      </PolledState>
    </section>
  );
}
