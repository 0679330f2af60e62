/** Identity records as the gateway answers them, for this page's component tests. */
import type { KeyView, LimitView, ListPage, OrganizationView, TeamView, UserView } from './types.ts';

const noLimits: LimitView = {
  rpm_limit: null,
  tpm_limit: null,
  rph_limit: null,
  rpd_limit: null,
  tpd_limit: null,
  output_tpm_limit: null,
  model_rpm_limit: null,
  model_tpm_limit: null,
  model_output_tpm_limit: null,
  max_budget: null,
  soft_budget: null,
  budget_duration: null,
  created_at: '2026-11-01T00:00:00.000Z',
  updated_at: '2026-11-01T00:00:00.000Z',
};

export function keyRecord(overrides: Partial<KeyView> & { key_id: string }): KeyView {
  return {
    ...noLimits,
    key_prefix: `sk-${overrides.key_id.slice(0, 4)}…`,
    key_name: null,
    user_id: null,
    team_id: null,
    models: null,
    expires_at: null,
    blocked: false,
    created_by: 'master',
    max_parallel_requests: null,
    spend: { total_cost: 0, cost_30d: 0, requests: 0, requests_30d: 0 },
    ...overrides,
  };
}

export function teamRecord(overrides: Partial<TeamView> & { team_id: string }): TeamView {
  return { ...noLimits, team_alias: null, organization_id: null, ...overrides };
}

export function organizationRecord(
  overrides: Partial<OrganizationView> & { organization_id: string },
): OrganizationView {
  return { ...noLimits, organization_alias: null, ...overrides };
}

export function userRecord(overrides: Partial<UserView> & { user_id: string }): UserView {
  return { ...noLimits, email: null, role: 'member', team_id: null, organization_id: null, ...overrides };
}

export function listOf<T>(
  data: T[],
  page: { total?: number; offset?: number; limit?: number } = {},
): ListPage<T> {
  return {
    object: 'list',
    data,
    total: page.total ?? data.length,
    limit: page.limit ?? 50,
    offset: page.offset ?? 0,
  };
}
