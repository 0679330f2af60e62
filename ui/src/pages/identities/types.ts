/** The identity records as GET /ui/api/{keys,users,teams,organizations} return them (src/http/schemas/identity-views.ts). */

export interface SpendTotals {
  total_cost: number;
  cost_30d: number;
  requests: number;
  requests_30d: number;
}

type ModelMap = Record<string, number> | null;

/** The limit and budget fields every scope carries. */
export interface LimitView {
  rpm_limit: number | null;
  tpm_limit: number | null;
  rph_limit: number | null;
  rpd_limit: number | null;
  tpd_limit: number | null;
  output_tpm_limit: number | null;
  model_rpm_limit: ModelMap;
  model_tpm_limit: ModelMap;
  model_output_tpm_limit?: ModelMap;
  max_budget: number | null;
  soft_budget: number | null;
  budget_duration: string | null;
  created_at: string;
  updated_at: string;
}

export interface KeyView extends LimitView {
  key_id: string;
  key_prefix: string;
  key_name: string | null;
  user_id: string | null;
  team_id: string | null;
  models: string[] | null;
  expires_at: string | null;
  blocked: boolean;
  created_by: string | null;
  max_parallel_requests: number | null;
  spend?: SpendTotals;
}

/** POST /ui/api/keys: the view plus the secret, shown once. */
export interface CreatedKey extends KeyView {
  key: string;
}

export interface TeamView extends LimitView {
  team_id: string;
  team_alias: string | null;
  organization_id: string | null;
  spend?: SpendTotals;
}

export interface OrganizationView extends LimitView {
  organization_id: string;
  organization_alias: string | null;
  spend?: SpendTotals;
}

export type UserRole = 'proxy_admin' | 'org_admin' | 'member';

export interface UserView extends LimitView {
  user_id: string;
  email: string | null;
  role: UserRole | string;
  team_id: string | null;
  organization_id: string | null;
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  total: number;
  limit: number;
  offset: number;
}

/** A row's name: the key name when set, else its prefix (the API's prefix already ends in "…"). */
export function keyLabel(key: Pick<KeyView, 'key_name' | 'key_prefix'>): string {
  return key.key_name || key.key_prefix;
}

export function teamLabel(team: Pick<TeamView, 'team_alias' | 'team_id'>): string {
  return team.team_alias || team.team_id;
}

export function organizationLabel(
  org: Pick<OrganizationView, 'organization_alias' | 'organization_id'>,
): string {
  return org.organization_alias || org.organization_id;
}
