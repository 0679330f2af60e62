/**
 * Schemas and views of the console's summary endpoints (GET /ui/api/session, /ui/api/console/overview,
 * /ui/api/console/deployments). ui/src/api/console-types.ts describes the same JSON for the browser.
 */
import Type from 'typebox';
import type { Overview } from '../../accounting/console-overview.ts';
import type { AdminActor } from '../../identity/authenticator.ts';
import type { RejectionSeries } from '../../limits/rejection-counter.ts';

const Nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const SessionView = Type.Object({
  actor: Type.Object(
    {
      kind: Type.Enum(['master', 'user']),
      user_id: Type.Optional(Type.String()),
      role: Type.Optional(Type.Enum(['proxy_admin', 'org_admin'])),
      organization_id: Type.Optional(Type.String()),
    },
    { description: 'Who the bearer key belongs to; never the key itself or its id.' },
  ),
});

export function sessionView(actor: AdminActor) {
  if (actor.kind === 'master') return { actor: { kind: 'master' as const } };
  if (actor.role === 'proxy_admin')
    return { actor: { kind: 'user' as const, user_id: actor.userId, role: actor.role } };
  return {
    actor: {
      kind: 'user' as const,
      user_id: actor.userId,
      role: actor.role,
      organization_id: actor.organizationId,
    },
  };
}

export const OverviewQuery = Type.Object({
  window: Type.Optional(Type.String({ maxLength: 8, description: '`1h`, `24h` (default), `7d` or `30d`.' })),
  organization_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'Only this organization (an organization administrator always sees only theirs).',
    }),
  ),
});

const Latency = Nullable(
  Type.Number({ description: 'Approximate: interpolated within ~10 % latency bins.' }),
);
const Figures = {
  requests: Type.Integer(),
  errors: Type.Integer({ description: 'Answered with a status of 400 or more.' }),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  spend: Type.Number({ description: 'USD.' }),
  latency_p50_ms: Latency,
  latency_p99_ms: Latency,
};
const TopModels = Type.Array(
  Type.Object({
    model: Type.String(),
    requests: Type.Integer(),
    total_tokens: Type.Integer(),
    spend: Type.Number(),
  }),
);
const TopKeys = Type.Array(
  Type.Object({
    key_id: Type.String(),
    key_name: Nullable(Type.String({ description: 'Null when the key was deleted.' })),
    requests: Type.Integer(),
    spend: Type.Number(),
  }),
);
const TopTeams = Type.Array(
  Type.Object({
    team_id: Type.String(),
    team_alias: Nullable(Type.String()),
    requests: Type.Integer(),
    spend: Type.Number(),
  }),
);

export const OverviewView = Type.Object({
  window: Type.String(),
  organization_id: Nullable(Type.String({ description: 'The organization the figures are narrowed to.' })),
  from: Type.String({ description: 'Start of the first bucket.' }),
  to: Type.String({ description: 'Now.' }),
  bucket_seconds: Type.Integer(),
  totals: Type.Object({ ...Figures, total_tokens: Type.Integer(), fallbacks: Type.Integer() }),
  series: Type.Array(Type.Object({ start: Type.String(), ...Figures })),
  top_models: TopModels,
  top_keys: TopKeys,
  top_teams: TopTeams,
  rejections: Type.Union([
    Type.Object({
      window_seconds: Type.Integer(),
      rate_limit: Type.Integer(),
      budget: Type.Integer(),
      series: Type.Array(
        Type.Object({ start: Type.String(), rate_limit: Type.Integer(), budget: Type.Integer() }),
      ),
    }),
    Type.Null({ description: 'The shared store (Redis) holding the refusal counters is unreachable.' }),
  ]),
});

const iso = (epochMs: number) => new Date(epochMs).toISOString();

export function overviewView(
  overview: Overview,
  rejections: RejectionSeries | null,
  organizationId: string | null,
) {
  const { totals } = overview;
  return {
    window: overview.window,
    organization_id: organizationId,
    from: iso(overview.from),
    to: iso(overview.to),
    bucket_seconds: overview.bucketMs / 1000,
    totals: {
      requests: totals.requests,
      errors: totals.errors,
      prompt_tokens: totals.promptTokens,
      completion_tokens: totals.completionTokens,
      total_tokens: totals.promptTokens + totals.completionTokens,
      spend: totals.spend,
      latency_p50_ms: totals.latencyP50Ms,
      latency_p99_ms: totals.latencyP99Ms,
      fallbacks: totals.fallbacks,
    },
    series: overview.series.map((bucket) => ({
      start: iso(bucket.start),
      requests: bucket.requests,
      errors: bucket.errors,
      prompt_tokens: bucket.promptTokens,
      completion_tokens: bucket.completionTokens,
      spend: bucket.spend,
      latency_p50_ms: bucket.latencyP50Ms,
      latency_p99_ms: bucket.latencyP99Ms,
    })),
    top_models: overview.topModels.map((row) => ({
      model: row.id,
      requests: row.requests,
      total_tokens: row.totalTokens,
      spend: row.spend,
    })),
    top_keys: overview.topKeys.map((row) => ({
      key_id: row.id,
      key_name: row.name,
      requests: row.requests,
      spend: row.spend,
    })),
    top_teams: overview.topTeams.map((row) => ({
      team_id: row.id,
      team_alias: row.name,
      requests: row.requests,
      spend: row.spend,
    })),
    rejections: rejections && {
      window_seconds: rejections.windowSeconds,
      rate_limit: rejections.rateLimit,
      budget: rejections.budget,
      series: rejections.series.map((entry) => ({
        start: iso(entry.start),
        rate_limit: entry.rateLimit,
        budget: entry.budget,
      })),
    },
  };
}

const DeploymentView = Type.Object({
  id: Type.String(),
  provider: Type.String(),
  healthy: Type.Boolean(),
  cooling_down_until: Nullable(Type.String()),
  in_flight: Type.Integer(),
  latency_ms: Nullable(Type.Number()),
  time_to_first_token_ms: Nullable(Type.Number()),
  recent_failures: Type.Integer(),
  requests: Type.Integer(),
  successes: Type.Integer(),
  failures: Type.Integer(),
  weight: Type.Number(),
  rpm_limit: Nullable(Type.Integer()),
  tpm_limit: Nullable(Type.Integer()),
  minute_usage: Type.Object({ requests: Type.Integer(), tokens: Type.Integer() }),
  utilization: Type.Number({ description: '0..1 against the tighter of rpm_limit and tpm_limit.' }),
  as_of: Type.String(),
});

export const DeploymentsView = Type.Object({
  counts: Type.Object({
    model_groups: Type.Integer(),
    deployments: Type.Integer(),
    healthy: Type.Integer(),
    cooling_down: Type.Integer(),
  }),
  topology: Type.Object({
    routing_strategy: Type.String(),
    num_retries: Type.Integer(),
    allowed_fails: Type.Integer(),
    cooldown_time: Type.Number(),
    enable_pre_call_checks: Type.Boolean(),
    usage_tracked: Type.Boolean(),
    fallbacks: Type.Unknown(),
    context_window_fallbacks: Type.Unknown(),
  }),
  model_groups: Type.Array(
    Type.Object({
      model: Type.String(),
      healthy_deployments: Type.Integer(),
      total_deployments: Type.Integer(),
      endpoints: Type.Array(Type.String(), {
        description:
          'The endpoints that serve the group (chat, completions, responses, messages, embeddings, …).',
      }),
      deployments: Type.Array(DeploymentView),
    }),
  ),
  fallback_events: Type.Array(
    Type.Object({
      timestamp: Type.String(),
      request_id: Type.Optional(
        Type.String({
          description: 'Absent for organization administrators (it may name another organization).',
        }),
      ),
      model: Type.String(),
      to_model: Nullable(Type.String()),
      from_deployment: Nullable(Type.String()),
      to_deployment: Nullable(Type.String()),
      reason: Type.String(),
      attempt: Type.Integer(),
    }),
    { description: "The newest 50 of this replica's fallback events, newest first." },
  ),
});
