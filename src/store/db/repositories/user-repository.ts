/** Persistence of users. */
import type { Kysely } from 'kysely';
import type { LimitFields } from '../../../canonical/caller.ts';
import type { DatabaseSchema, UsersTable } from '../tables.ts';
import {
  columnsFromLimits,
  jsonOrNull,
  limitsFromColumns,
  type Page,
  type PageRequest,
  parseJson,
} from './limit-columns.ts';
import { usersOf } from './organization-scope.ts';
import { containsText } from './text-search.ts';

/** `proxy_admin` manages everything, `org_admin` its organization, `member` nothing (docs/security.md). */
export type UserRole = 'proxy_admin' | 'org_admin' | 'member';

export interface UserRecord extends LimitFields {
  user_id: string;
  email: string | null;
  role: UserRole;
  team_id: string | null;
  organization_id: string | null;
  metadata: Record<string, unknown> | null;
  created_at: number;
  updated_at: number;
}

export type UserChanges = Partial<LimitFields> & {
  email?: string | null;
  role?: UserRole;
  team_id?: string | null;
  organization_id?: string | null;
  metadata?: Record<string, unknown> | null;
};

export class UserRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async get(userId: string): Promise<UserRecord | undefined> {
    const row = await this.db
      .selectFrom('users')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async list(
    page: PageRequest,
    /** `search`: part of the user's id, email, team or organization (case-insensitive). */
    filter: {
      teamId?: string | undefined;
      organizationId?: string | undefined;
      search?: string | undefined;
    } = {},
  ): Promise<Page<UserRecord>> {
    let query = this.db.selectFrom('users');
    if (filter.search)
      query = query.where(containsText(['user_id', 'email', 'team_id', 'organization_id'], filter.search));
    if (filter.teamId !== undefined) query = query.where('team_id', '=', filter.teamId);
    // Users of the organization directly or through their team, as ownership is decided (organization-of.ts).
    if (filter.organizationId !== undefined)
      query = query.where('user_id', 'in', usersOf(this.db, filter.organizationId));
    const [rows, count] = await Promise.all([
      query
        .selectAll()
        .orderBy('created_at')
        .orderBy('user_id')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toRecord), total: Number(count.total) };
  }

  async insert(userId: string, changes: UserChanges, now: number): Promise<void> {
    await this.db
      .insertInto('users')
      .values({
        user_id: userId,
        email: changes.email ?? null,
        role: changes.role ?? 'member',
        team_id: changes.team_id ?? null,
        organization_id: changes.organization_id ?? null,
        metadata: jsonOrNull(changes.metadata),
        ...columnsFromLimits(changes),
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async update(userId: string, changes: UserChanges, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({
        ...(changes.email !== undefined ? { email: changes.email } : {}),
        ...(changes.role !== undefined ? { role: changes.role } : {}),
        ...(changes.team_id !== undefined ? { team_id: changes.team_id } : {}),
        ...(changes.organization_id !== undefined ? { organization_id: changes.organization_id } : {}),
        ...(changes.metadata !== undefined ? { metadata: jsonOrNull(changes.metadata) } : {}),
        ...columnsFromLimits(changes),
        updated_at: now,
      })
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(userId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('users').where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

/** Stored roles; `admin`, written by earlier versions, is the proxy administrator. */
function roleOf(stored: string): UserRole {
  if (stored === 'admin' || stored === 'proxy_admin') return 'proxy_admin';
  return stored === 'org_admin' ? 'org_admin' : 'member';
}

function toRecord(row: UsersTable): UserRecord {
  return {
    user_id: row.user_id,
    email: row.email,
    role: roleOf(row.role),
    team_id: row.team_id,
    organization_id: row.organization_id,
    metadata: parseJson(row.metadata),
    ...limitsFromColumns(row),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
