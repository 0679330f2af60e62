/** Persistence of API keys. Only the keyed hash of a secret is stored, never the secret. */
import type { Kysely } from 'kysely';
import type { LimitFields } from '../../../canonical/caller.ts';
import type { ApiKeysTable, DatabaseSchema } from '../tables.ts';
import {
  columnsFromLimits,
  flagColumn,
  flagFromColumn,
  jsonOrNull,
  limitsFromColumns,
  type Page,
  type PageRequest,
  parseJson,
} from './limit-columns.ts';
import { keysOf } from './organization-scope.ts';
import { containsText } from './text-search.ts';

export interface ApiKeyRecord extends LimitFields {
  key_id: string;
  key_hash: string;
  key_prefix: string;
  key_name: string | null;
  user_id: string | null;
  team_id: string | null;
  models: string[] | null;
  expires_at: number | null;
  blocked: boolean;
  max_parallel_requests: number | null;
  /** Response cache switch: null follows the key's team, then the gateway setting. */
  cache_enabled: boolean | null;
  metadata: Record<string, unknown> | null;
  /** Who created the key: `master` or `user:<user_id>` (null for keys older than the record). */
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export type ApiKeyChanges = Partial<LimitFields> & {
  key_name?: string | null;
  user_id?: string | null;
  team_id?: string | null;
  models?: string[] | null;
  expires_at?: number | null;
  blocked?: boolean;
  max_parallel_requests?: number | null;
  cache_enabled?: boolean | null;
  metadata?: Record<string, unknown> | null;
};

export interface NewApiKey extends ApiKeyChanges {
  key_id: string;
  key_hash: string;
  key_prefix: string;
  created_by: string;
  /** The `user:<id>` labels behind the key, creator first (identity/key-lineage.ts). */
  created_by_lineage: readonly string[];
}

/** What the four-eyes rule reads of a key; `created_by_lineage` is null for keys older than it. */
export interface StoredKeyLineage {
  user_id: string | null;
  created_by: string | null;
  created_by_lineage: string[] | null;
}

export class ApiKeyRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async get(keyId: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_id', '=', keyId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_hash', '=', keyHash)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async list(
    page: PageRequest,
    filter: {
      userId?: string | undefined;
      teamId?: string | undefined;
      organizationId?: string | undefined;
      /** Part of the key's id, name, prefix, team or user (case-insensitive). */
      search?: string | undefined;
    } = {},
  ): Promise<Page<ApiKeyRecord>> {
    let query = this.db.selectFrom('api_keys');
    if (filter.search)
      query = query.where(
        containsText(['key_id', 'key_name', 'key_prefix', 'team_id', 'user_id'], filter.search),
      );
    if (filter.organizationId !== undefined)
      query = query.where('key_id', 'in', keysOf(this.db, filter.organizationId));
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
    if (filter.teamId !== undefined) query = query.where('team_id', '=', filter.teamId);
    const [rows, count] = await Promise.all([
      query
        .selectAll()
        .orderBy('created_at')
        .orderBy('key_id')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toRecord), total: Number(count.total) };
  }

  /** Ids of keys that belong to a user or team (used to invalidate cached authentications). */
  async idsOwnedBy(filter: { userId?: string; teamId?: string }): Promise<string[]> {
    let query = this.db.selectFrom('api_keys').select('key_id');
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
    if (filter.teamId !== undefined) query = query.where('team_id', '=', filter.teamId);
    return (await query.execute()).map((row) => row.key_id);
  }

  /** Whether a key of this team belongs to a proxy administrator (`admin` is its earlier name). */
  async teamHoldsProxyAdminKey(teamId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.user_id', 'api_keys.user_id')
      .select('api_keys.key_id')
      .where('api_keys.team_id', '=', teamId)
      .where('users.role', 'in', ['proxy_admin', 'admin'])
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Who is behind each of these keys: owner, creator and stored creator lineage (absent ids left out). */
  async lineages(keyIds: readonly string[]): Promise<Map<string, StoredKeyLineage>> {
    if (keyIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('api_keys')
      .select(['key_id', 'user_id', 'created_by', 'created_by_lineage'])
      .where('key_id', 'in', [...new Set(keyIds)])
      .execute();
    return new Map(
      rows.map((row) => [
        row.key_id,
        {
          user_id: row.user_id,
          created_by: row.created_by,
          created_by_lineage: parseJson<string[]>(row.created_by_lineage),
        },
      ]),
    );
  }

  async insert(key: NewApiKey, now: number): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({
        key_id: key.key_id,
        key_hash: key.key_hash,
        key_prefix: key.key_prefix,
        key_name: key.key_name ?? null,
        user_id: key.user_id ?? null,
        team_id: key.team_id ?? null,
        models: jsonOrNull(key.models),
        expires_at: key.expires_at ?? null,
        blocked: key.blocked ? 1 : 0,
        max_parallel_requests: key.max_parallel_requests ?? null,
        cache_enabled: flagColumn(key.cache_enabled ?? null),
        metadata: jsonOrNull(key.metadata),
        created_by: key.created_by,
        created_by_lineage: JSON.stringify(key.created_by_lineage),
        ...columnsFromLimits(key),
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async update(keyId: string, changes: ApiKeyChanges, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({
        ...(changes.key_name !== undefined ? { key_name: changes.key_name } : {}),
        ...(changes.user_id !== undefined ? { user_id: changes.user_id } : {}),
        ...(changes.team_id !== undefined ? { team_id: changes.team_id } : {}),
        ...(changes.models !== undefined ? { models: jsonOrNull(changes.models) } : {}),
        ...(changes.expires_at !== undefined ? { expires_at: changes.expires_at } : {}),
        ...(changes.blocked !== undefined ? { blocked: changes.blocked ? 1 : 0 } : {}),
        ...(changes.max_parallel_requests !== undefined
          ? { max_parallel_requests: changes.max_parallel_requests }
          : {}),
        ...(changes.cache_enabled !== undefined ? { cache_enabled: flagColumn(changes.cache_enabled) } : {}),
        ...(changes.metadata !== undefined ? { metadata: jsonOrNull(changes.metadata) } : {}),
        ...columnsFromLimits(changes),
        updated_at: now,
      })
      .where('key_id', '=', keyId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(keyId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('api_keys').where('key_id', '=', keyId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

function toRecord(row: ApiKeysTable): ApiKeyRecord {
  return {
    key_id: row.key_id,
    key_hash: row.key_hash,
    key_prefix: row.key_prefix,
    key_name: row.key_name,
    user_id: row.user_id,
    team_id: row.team_id,
    models: parseJson(row.models),
    expires_at: row.expires_at,
    blocked: Number(row.blocked) === 1,
    max_parallel_requests: row.max_parallel_requests,
    cache_enabled: flagFromColumn(row.cache_enabled),
    metadata: parseJson(row.metadata),
    created_by: row.created_by,
    ...limitsFromColumns(row),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
