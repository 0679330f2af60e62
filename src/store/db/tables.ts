/** Table types for Kysely: the one schema shared by SQLite and PostgreSQL (see migrations/). */

/** Identity limit columns present on organizations, teams, users and keys. Maps are JSON text. */
export interface LimitColumns {
  rpm_limit: number | null;
  tpm_limit: number | null;
  rph_limit: number | null;
  rpd_limit: number | null;
  tpd_limit: number | null;
  output_tpm_limit: number | null;
  model_rpm_limit: string | null;
  model_tpm_limit: string | null;
  model_output_tpm_limit: string | null;
}

export interface Timestamps {
  /** Epoch milliseconds. */
  created_at: number;
  updated_at: number;
}

export interface OrganizationsTable extends LimitColumns, Timestamps {
  organization_id: string;
  organization_alias: string | null;
  metadata: string | null;
}

export interface TeamsTable extends LimitColumns, Timestamps {
  team_id: string;
  team_alias: string | null;
  organization_id: string | null;
  metadata: string | null;
}

export interface UsersTable extends LimitColumns, Timestamps {
  user_id: string;
  email: string | null;
  role: string;
  team_id: string | null;
  organization_id: string | null;
  metadata: string | null;
}

export interface ApiKeysTable extends LimitColumns, Timestamps {
  key_id: string;
  key_hash: string;
  /** The first characters of the secret, for display (`sk-AbC…`). */
  key_prefix: string;
  key_name: string | null;
  user_id: string | null;
  team_id: string | null;
  /** JSON array of model names, or null for every model. */
  models: string | null;
  expires_at: number | null;
  /** 0 or 1 (integers keep SQLite and PostgreSQL identical). */
  blocked: number;
  max_parallel_requests: number | null;
  metadata: string | null;
}

export interface GatewaySettingsTable {
  name: string;
  value: string;
}

/** Cache-invalidation records written in the transaction of an admin change, published by a worker. */
export interface CacheInvalidationsTable {
  invalidation_id: string;
  message: string;
  created_at: number;
}

export interface DatabaseSchema {
  organizations: OrganizationsTable;
  teams: TeamsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  gateway_settings: GatewaySettingsTable;
  cache_invalidations: CacheInvalidationsTable;
}
