/**
 * The approval inbox: pending tool calls (polled every 5 s) with their arguments and caller, approved or
 * rejected with a comment (approval-decision.tsx), and the newest decisions below.
 */
import { useQuery } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import type { ApiClient } from '../../api/client.ts';
import { useSession } from '../../auth/session.tsx';
import { type Column, DataTable } from '../../components/data-table.tsx';
import { SelectField } from '../../components/field.tsx';
import { formatAge, formatCount, formatTime } from '../../components/format.ts';
import { PolledState } from '../../components/polled-state.tsx';
import { EmptyState } from '../../components/query-state.tsx';
import {
  DECISIONS_SHOWN,
  DecisionControls,
  decidedKey,
  type OnDecided,
  pendingKey,
} from './approval-decision.tsx';
import { type ApprovalStatus, approvalToolName, type ListAnswer, type McpApproval } from './mcp-types.ts';
import { useServers } from './use-servers.ts';

export const APPROVALS_POLL_MS = 5_000;

/** Arguments longer than this many characters start collapsed. */
const COLLAPSE_AFTER = 200;

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

function pendingColumns(now: number, onDecided: OnDecided): Column<McpApproval>[] {
  return [
    { header: 'Tool', cell: (approval) => <code>{approvalToolName(approval)}</code> },
    { header: 'Arguments', cell: (approval) => <ArgumentsView approval={approval} /> },
    { header: 'Caller', cell: (approval) => <Caller approval={approval} /> },
    {
      header: 'Age',
      cell: (approval) => <time dateTime={approval.created_at}>{formatAge(approval.created_at, now)}</time>,
    },
    { header: 'Expires', cell: (approval) => formatTime(approval.expires_at) },
    {
      header: 'Decision',
      cell: (approval) => <DecisionControls approval={approval} onDecided={onDecided} />,
    },
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

/** Every status but pending: the API filters by one status, so each is asked for its newest. */
const DECIDED_STATUSES: ApprovalStatus[] = ['approved', 'rejected', 'expired'];

/**
 * The newest decisions of every decided status, newest first (by request time, as the API orders), and
 * how many there are in all. The newest of each status together hold the newest overall.
 */
export async function fetchDecisions(api: ApiClient, serverId: string): Promise<ListAnswer<McpApproval>> {
  const lists = await Promise.all(
    DECIDED_STATUSES.map((status) =>
      api.get<ListAnswer<McpApproval>>('/mcp-approval-requests', {
        status,
        server_id: serverId,
        limit: DECISIONS_SHOWN,
      }),
    ),
  );
  const data = lists
    .flatMap((list) => list.data)
    .sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
    .slice(0, DECISIONS_SHOWN);
  const total = lists.reduce((sum, list) => sum + list.total, 0);
  return { object: 'list', data, total, limit: DECISIONS_SHOWN, offset: 0 };
}

function ServerFilter(props: { value: string; onChange: (serverId: string) => void }) {
  const { servers } = useServers();
  return (
    <SelectField label="Server" value={props.value} onChange={(event) => props.onChange(event.target.value)}>
      <option value="">All servers</option>
      {servers.map((server) => (
        <option key={server.server_id} value={server.server_id}>
          {server.name} ({server.server_key})
        </option>
      ))}
    </SelectField>
  );
}

function PendingApprovals(props: {
  serverId: string;
  now?: (() => number) | undefined;
  onDecided: OnDecided;
}) {
  const { api } = useSession();
  const pending = useQuery({
    queryKey: [...pendingKey, props.serverId],
    queryFn: () =>
      api.get<ListAnswer<McpApproval>>('/mcp-approval-requests', {
        status: 'pending',
        server_id: props.serverId,
        limit: 500,
      }),
    refetchInterval: APPROVALS_POLL_MS,
  });
  // Reading dataUpdatedAt re-renders on every poll, so the ages move on even when nothing else changed.
  const now = props.now ? props.now() : Math.max(Date.now(), pending.dataUpdatedAt);
  return (
    <PolledState query={pending} what="pending approvals">
      {(answer) =>
        answer.data.length === 0 ? (
          <EmptyState title="No pending approvals">
            Calls of tools with a manual-approval policy will appear here.
          </EmptyState>
        ) : (
          <DataTable
            caption="Pending approvals"
            columns={pendingColumns(now, props.onDecided)}
            rows={answer.data}
            rowKey={(approval) => approval.approval_request_id}
          />
        )
      }
    </PolledState>
  );
}

function RecentDecisions(props: { serverId: string }) {
  const { api } = useSession();
  const decided = useQuery({
    queryKey: [...decidedKey, props.serverId],
    queryFn: () => fetchDecisions(api, props.serverId),
    refetchInterval: APPROVALS_POLL_MS,
  });
  return (
    <PolledState query={decided} what="recent decisions">
      {(answer) =>
        answer.data.length === 0 ? (
          <p>No decisions yet.</p>
        ) : (
          <>
            {answer.total > answer.data.length && (
              <p className="muted">
                The {formatCount(answer.data.length)} newest of {formatCount(answer.total)} decisions.
              </p>
            )}
            <DataTable
              caption="Recent decisions"
              columns={decidedColumns}
              rows={answer.data}
              rowKey={(approval) => approval.approval_request_id}
            />
          </>
        )
      }
    </PolledState>
  );
}

/** `now` is injectable so tests fix the ages they read. */
export function ApprovalsTab(props: { now?: () => number }) {
  const [serverId, setServerId] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  const [lastDecision, setLastDecision] = useState<McpApproval | null>(null);
  // A decided row leaves the table: focus that was in it goes to the inbox heading, not the page top.
  const onDecided: OnDecided = (decided, hadFocus) => {
    setLastDecision(decided);
    if (hadFocus) heading.current?.focus();
  };
  return (
    <section aria-labelledby="approvals-title">
      <h2 id="approvals-title" ref={heading} tabIndex={-1}>
        Approval inbox
      </h2>
      <p className="muted">
        Calls of tools whose policy requires approval wait here for 24 hours. An approval lets the identical
        call run once within 15 minutes; a rejection refuses it for 15 minutes. Checked every 5 seconds.
      </p>
      <ServerFilter value={serverId} onChange={setServerId} />
      {lastDecision && (
        <p className="notice notice-ok" role="status">
          {statusNames[lastDecision.status]} {approvalToolName(lastDecision)}: it is listed under Recent
          decisions.
        </p>
      )}
      <PendingApprovals serverId={serverId} now={props.now} onDecided={onDecided} />
      <h3>Recent decisions</h3>
      <RecentDecisions serverId={serverId} />
    </section>
  );
}
