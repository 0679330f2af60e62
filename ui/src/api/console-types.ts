/**
 * The shapes of the console's summary endpoints (src/http/routes/console-routes.ts). The gateway's
 * TypeBox views and these types describe the same JSON; a gateway test checks real answers against
 * the fields named here.
 */
import type { Actor } from '../auth/session.tsx';

/** GET /ui/api/session: who the bearer key belongs to (401 for a non-admin key). */
export interface SessionAnswer {
  actor: Actor;
}

export type OverviewWindow = '1h' | '24h' | '7d' | '30d';

/** One time bucket of the overview, from the spend records (every bucket present, zero-filled). */
export interface OverviewBucket {
  /** ISO start of the bucket. */
  start: string;
  requests: number;
  /** Requests answered with a status of 400 or more. */
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** USD. */
  spend: number;
  /** Null when the bucket has no request. Approximate: interpolated within log-spaced latency bins. */
  latency_p50_ms: number | null;
  latency_p99_ms: number | null;
}

export interface OverviewTotals {
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  spend: number;
  latency_p50_ms: number | null;
  latency_p99_ms: number | null;
  /** Requests answered by another deployment or model group than the first one tried. */
  fallbacks: number;
}

export interface TopModel {
  model: string;
  requests: number;
  total_tokens: number;
  spend: number;
}
export interface TopKey {
  key_id: string;
  key_name: string | null;
  requests: number;
  spend: number;
}
export interface TopTeam {
  team_id: string;
  team_alias: string | null;
  requests: number;
  spend: number;
}

/** Requests refused by identity rate limits (429) and budgets, across all replicas, per minute. */
export interface Rejections {
  window_seconds: number;
  rate_limit: number;
  budget: number;
  series: Array<{ start: string; rate_limit: number; budget: number }>;
}

/** GET /ui/api/console/overview?window=1h|24h|7d|30d (default 24h); narrowed to an org admin's organization. */
export interface OverviewAnswer {
  window: OverviewWindow;
  /** The organization the figures are narrowed to (an org admin's own); null for the whole gateway. */
  organization_id?: string | null;
  /** Start of the first bucket (buckets are aligned to their size, the last one holds `to`). */
  from: string;
  to: string;
  bucket_seconds: number;
  totals: OverviewTotals;
  series: OverviewBucket[];
  /** Top five by spend, then requests. */
  top_models: TopModel[];
  top_keys: TopKey[];
  top_teams: TopTeam[];
  /** Null while the shared store (Redis) that counts refusals is unreachable; the rest still answers. */
  rejections: Rejections | null;
}

/** One deployment as GET /health/deployments reports it (this replica's routing view). */
export interface DeploymentView {
  id: string;
  provider: string;
  healthy: boolean;
  cooling_down_until: string | null;
  in_flight: number;
  latency_ms: number | null;
  time_to_first_token_ms: number | null;
  recent_failures: number;
  requests: number;
  successes: number;
  failures: number;
  weight: number;
  rpm_limit: number | null;
  tpm_limit: number | null;
  minute_usage: { requests: number; tokens: number };
  /** 0..1 against the tighter of rpm_limit and tpm_limit. */
  utilization: number;
  as_of: string;
}

export interface ModelGroupView {
  model: string;
  healthy_deployments: number;
  total_deployments: number;
  /** The endpoints the group serves: chat, completions, responses, messages, embeddings, images, … */
  endpoints: string[];
  deployments: DeploymentView[];
}

export interface FallbackEventView {
  timestamp: string;
  /** Absent for organization administrators: it may name another organization's request. */
  request_id?: string;
  model: string;
  to_model: string | null;
  from_deployment: string | null;
  to_deployment: string | null;
  reason: string;
  attempt: number;
}

/** GET /ui/api/console/deployments: routing health, topology and recent fallback events of this replica. */
export interface DeploymentsAnswer {
  counts: { model_groups: number; deployments: number; healthy: number; cooling_down: number };
  topology: {
    routing_strategy: string;
    num_retries: number;
    allowed_fails: number;
    cooldown_time: number;
    enable_pre_call_checks: boolean;
    usage_tracked: boolean;
    fallbacks: unknown;
    context_window_fallbacks: unknown;
  };
  model_groups: ModelGroupView[];
  fallback_events: FallbackEventView[];
}
