/** The authenticated caller of a request, as identity/ resolves it from a bearer key. */

/**
 * Spend budgets of an organization, team, user or key, in USD (null: none). `budget_duration` is `Nd`
 * or `Nh` (null: a lifetime budget); see budget-window.ts.
 */
export interface BudgetFields {
  max_budget: number | null;
  soft_budget: number | null;
  budget_duration: string | null;
}

/** Identity rate-limit fields shared by organizations, teams, users and keys (null disables a check). */
export interface LimitFields extends BudgetFields {
  rpm_limit: number | null;
  tpm_limit: number | null;
  rph_limit: number | null;
  rpd_limit: number | null;
  tpd_limit: number | null;
  output_tpm_limit: number | null;
  model_rpm_limit: Readonly<Record<string, number>> | null;
  model_tpm_limit: Readonly<Record<string, number>> | null;
  model_output_tpm_limit: Readonly<Record<string, number>> | null;
}

export const limitFieldNames = [
  'rpm_limit',
  'tpm_limit',
  'rph_limit',
  'rpd_limit',
  'tpd_limit',
  'output_tpm_limit',
  'model_rpm_limit',
  'model_tpm_limit',
  'model_output_tpm_limit',
] as const satisfies ReadonlyArray<keyof LimitFields>;

export type ScopeKind = 'org' | 'team' | 'user' | 'key';

/** A scope's budget, ready for admission: amounts in integer micro-USD, the window in milliseconds. */
export interface ScopeBudget {
  /** Hard limit: spend at or above it refuses the next request (null: only a soft budget). */
  readonly maxMicros: number | null;
  /** Warning threshold (null: none). */
  readonly softMicros: number | null;
  /** Window length; 0 for a lifetime budget. */
  readonly durationMs: number;
}

export interface ScopePolicy {
  readonly kind: ScopeKind;
  readonly id: string;
  readonly limits: Readonly<LimitFields>;
  /** Null when the scope has neither max_budget nor soft_budget. */
  readonly budget: ScopeBudget | null;
}

export interface Caller {
  readonly kind: 'api_key' | 'master';
  readonly keyId: string | null;
  readonly keyName: string | null;
  readonly userId: string | null;
  readonly teamId: string | null;
  readonly organizationId: string | null;
  /** The role of the key's user; `admin` users may call the admin API with their key. */
  readonly userRole: 'proxy_admin' | 'org_admin' | 'member' | null;
  /** Model allow-list of the key; null allows every model. */
  readonly models: readonly string[] | null;
  readonly maxParallelRequests: number | null;
  /** Response cache switch: the key's `cache_enabled`, else its team's; null follows the gateway setting. */
  readonly cacheEnabled: boolean | null;
  /** Scopes in the spec's order: organization, team, user, key. Only scopes that exist are present. */
  readonly scopes: readonly ScopePolicy[];
  /** Epoch milliseconds, or null when the key never expires. */
  readonly expiresAt: number | null;
}

export function mayUseModel(caller: Caller, model: string): boolean {
  return caller.models === null || caller.models.length === 0 || caller.models.includes(model);
}
