/** Persistence of teams. */
import type { Kysely } from 'kysely';
import type { LimitFields } from '../../../canonical/caller.ts';
import type { DatabaseSchema, TeamsTable } from '../tables.ts';
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
import { containsText } from './text-search.ts';

export interface TeamRecord extends LimitFields {
  team_id: string;
  team_alias: string | null;
  organization_id: string | null;
  metadata: Record<string, unknown> | null;
  /** Response cache switch for the team's keys: null follows the gateway setting. */
  cache_enabled: boolean | null;
  created_at: number;
  updated_at: number;
}

export type TeamChanges = Partial<LimitFields> & {
  team_alias?: string | null;
  organization_id?: string | null;
  metadata?: Record<string, unknown> | null;
  cache_enabled?: boolean | null;
};

export class TeamRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async get(teamId: string): Promise<TeamRecord | undefined> {
    const row = await this.db
      .selectFrom('teams')
      .selectAll()
      .where('team_id', '=', teamId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** `search`: part of the team's id, alias or organization (case-insensitive). */
  async list(page: PageRequest, organizationId?: string, search?: string): Promise<Page<TeamRecord>> {
    let query = this.db.selectFrom('teams');
    if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
    if (search) query = query.where(containsText(['team_id', 'team_alias', 'organization_id'], search));
    const [rows, count] = await Promise.all([
      query
        .selectAll()
        .orderBy('created_at')
        .orderBy('team_id')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toRecord), total: Number(count.total) };
  }

  async insert(teamId: string, changes: TeamChanges, now: number): Promise<void> {
    await this.db
      .insertInto('teams')
      .values({
        team_id: teamId,
        team_alias: changes.team_alias ?? null,
        organization_id: changes.organization_id ?? null,
        metadata: jsonOrNull(changes.metadata),
        cache_enabled: flagColumn(changes.cache_enabled ?? null),
        ...columnsFromLimits(changes),
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async update(teamId: string, changes: TeamChanges, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('teams')
      .set({
        ...(changes.team_alias !== undefined ? { team_alias: changes.team_alias } : {}),
        ...(changes.organization_id !== undefined ? { organization_id: changes.organization_id } : {}),
        ...(changes.metadata !== undefined ? { metadata: jsonOrNull(changes.metadata) } : {}),
        ...(changes.cache_enabled !== undefined ? { cache_enabled: flagColumn(changes.cache_enabled) } : {}),
        ...columnsFromLimits(changes),
        updated_at: now,
      })
      .where('team_id', '=', teamId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(teamId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('teams').where('team_id', '=', teamId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

function toRecord(row: TeamsTable): TeamRecord {
  return {
    team_id: row.team_id,
    team_alias: row.team_alias,
    organization_id: row.organization_id,
    metadata: parseJson(row.metadata),
    cache_enabled: flagFromColumn(row.cache_enabled),
    ...limitsFromColumns(row),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
