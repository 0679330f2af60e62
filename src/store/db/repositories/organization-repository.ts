/** Persistence of organizations. */
import type { Kysely } from 'kysely';
import type { LimitFields } from '../../../canonical/caller.ts';
import type { DatabaseSchema, OrganizationsTable } from '../tables.ts';
import {
  columnsFromLimits,
  jsonOrNull,
  limitsFromColumns,
  type Page,
  type PageRequest,
  parseJson,
} from './limit-columns.ts';
import { containsText } from './text-search.ts';

export interface OrganizationRecord extends LimitFields {
  organization_id: string;
  organization_alias: string | null;
  metadata: Record<string, unknown> | null;
  created_at: number;
  updated_at: number;
}

export type OrganizationChanges = Partial<LimitFields> & {
  organization_alias?: string | null;
  metadata?: Record<string, unknown> | null;
};

export class OrganizationRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async get(organizationId: string): Promise<OrganizationRecord | undefined> {
    const row = await this.db
      .selectFrom('organizations')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** A page of organizations; `organizationId` narrows it to that one (an organization administrator's view). */
  /** `search`: part of the organization's id or alias (case-insensitive). */
  async list(page: PageRequest, organizationId?: string, search?: string): Promise<Page<OrganizationRecord>> {
    let query = this.db.selectFrom('organizations');
    if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
    if (search) query = query.where(containsText(['organization_id', 'organization_alias'], search));
    const [rows, count] = await Promise.all([
      query
        .selectAll()
        .orderBy('created_at')
        .orderBy('organization_id')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toRecord), total: Number(count.total) };
  }

  async insert(organizationId: string, changes: OrganizationChanges, now: number): Promise<void> {
    await this.db
      .insertInto('organizations')
      .values({
        organization_id: organizationId,
        organization_alias: changes.organization_alias ?? null,
        metadata: jsonOrNull(changes.metadata),
        ...columnsFromLimits(changes),
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async update(organizationId: string, changes: OrganizationChanges, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('organizations')
      .set({
        ...(changes.organization_alias !== undefined
          ? { organization_alias: changes.organization_alias }
          : {}),
        ...(changes.metadata !== undefined ? { metadata: jsonOrNull(changes.metadata) } : {}),
        ...columnsFromLimits(changes),
        updated_at: now,
      })
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(organizationId: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('organizations')
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** How many teams and users still belong to the organization (it cannot be deleted while any do). */
  async countMembers(organizationId: string): Promise<number> {
    const [teams, users] = await Promise.all([
      this.db
        .selectFrom('teams')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow(),
      this.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow(),
    ]);
    return Number(teams.n) + Number(users.n);
  }
}

function toRecord(row: OrganizationsTable): OrganizationRecord {
  return {
    organization_id: row.organization_id,
    organization_alias: row.organization_alias,
    metadata: parseJson(row.metadata),
    ...limitsFromColumns(row),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
