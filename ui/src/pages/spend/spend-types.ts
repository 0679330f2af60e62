/**
 * The answers of GET /ui/api/spend/summary, /ui/api/spend/logs and /ui/api/audit as the console reads them
 * (src/http/schemas/spend-views.ts and src/http/routes/audit-routes.ts are the source).
 */

export type SpendGroupBy = 'key' | 'user' | 'team' | 'organization' | 'model' | 'day';

export interface SpendSummaryRow {
  /** The id, model or day (YYYY-MM-DD) this row totals. */
  group: string;
  requests: number;
  failed_requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  unknown_usage_requests: number;
  /** USD. */
  cost: number;
}

export interface SpendSummaryAnswer {
  object: 'list';
  group_by: SpendGroupBy;
  data: SpendSummaryRow[];
  filters: Record<string, string | number>;
}

export interface SpendRecord {
  request_id: string;
  created_at: string;
  key_id: string | null;
  user_id: string | null;
  team_id: string | null;
  organization_id: string | null;
  model: string;
  model_group: string | null;
  deployment_id: string | null;
  endpoint: string;
  attempts: number;
  stream: boolean;
  status: number;
  usage_known: boolean;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  /** USD; null when usage or a price is unknown. */
  cost: number | null;
  latency_ms: number;
  ttft_ms: number | null;
  cache_hit: boolean;
}

export interface SpendLogsAnswer {
  object: 'list';
  data: SpendRecord[];
  next_cursor: string | null;
  limit: number;
  filters: Record<string, string | number>;
}

export interface AuditEntry {
  object: 'audit_entry';
  audit_id: string;
  created_at: string;
  /** `master` or `user:<user_id>`. */
  actor: string;
  actor_key_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  organization_id: string | null;
  request_id: string;
  before: unknown;
  after: unknown;
}

export interface AuditAnswer {
  object: 'list';
  data: AuditEntry[];
  has_more: boolean;
  next_cursor: string | null;
  limit: number;
}
