/** Table cells the identity lists share: limits in short, spend, budget against spend, key status. */
import { formatCount, formatUsd } from '../../components/format.ts';
import type { KeyView, LimitView, SpendTotals } from './types.ts';

const shortLimits: Array<[keyof LimitView | 'max_parallel_requests', string]> = [
  ['rpm_limit', 'RPM'],
  ['tpm_limit', 'TPM'],
  ['rph_limit', 'req/h'],
  ['rpd_limit', 'req/day'],
  ['tpd_limit', 'tokens/day'],
  ['output_tpm_limit', 'output TPM'],
  ['max_parallel_requests', 'parallel'],
];

/** "60 RPM · 2 parallel", or "None" when no limit is set. */
export function limitsSummary(record: LimitView & { max_parallel_requests?: number | null }): string {
  const parts = shortLimits
    .filter(([name]) => typeof record[name] === 'number')
    .map(([name, unit]) => `${formatCount(record[name] as number)} ${unit}`);
  const maps = (['model_rpm_limit', 'model_tpm_limit', 'model_output_tpm_limit'] as const).filter(
    (name) => record[name] && Object.keys(record[name] ?? {}).length > 0,
  ).length;
  if (maps > 0) parts.push(`${maps} per-model`);
  return parts.length > 0 ? parts.join(' · ') : 'None';
}

export function SpendCell(props: { spend: SpendTotals | undefined }) {
  if (!props.spend) return <>—</>;
  return (
    <>
      {formatUsd(props.spend.total_cost)}
      <span className="cell-note">{formatUsd(props.spend.cost_30d)} in 30 days</span>
    </>
  );
}

/**
 * The budget, and whether it is reached. Only a lifetime budget can be compared here: the API's
 * spend totals are lifetime and 30-day, not the budget's own window.
 */
export function BudgetCell(props: { record: LimitView; spend: SpendTotals | undefined }) {
  const { max_budget: max, budget_duration: duration } = props.record;
  if (max === null) return <>No budget</>;
  const reached = duration === null && props.spend !== undefined && props.spend.total_cost >= max;
  return (
    <>
      {formatUsd(max)} {duration ? `every ${duration}` : 'lifetime'}
      {reached && <span className="badge badge-danger">Reached</span>}
    </>
  );
}

export type KeyStatus = 'Active' | 'Blocked' | 'Expired';

export function keyStatus(key: Pick<KeyView, 'blocked' | 'expires_at'>, now: number): KeyStatus {
  if (key.blocked) return 'Blocked';
  if (key.expires_at !== null && Date.parse(key.expires_at) <= now) return 'Expired';
  return 'Active';
}

export function KeyStatusBadge(props: { status: KeyStatus }) {
  const tone =
    props.status === 'Active' ? 'badge-ok' : props.status === 'Blocked' ? 'badge-danger' : 'badge-warn';
  return <span className={`badge ${tone}`}>{props.status}</span>;
}
