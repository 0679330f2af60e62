/** What budget reconciliation reads: the scopes that have a budget, and their spend in a time range. */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../tables.ts';

export type BudgetScopeKind = 'org' | 'team' | 'user' | 'key';

export interface BudgetedScope {
  kind: BudgetScopeKind;
  id: string;
  budget_duration: string | null;
}

const tables = [
  { kind: 'org', table: 'organizations', id: 'organization_id' },
  { kind: 'team', table: 'teams', id: 'team_id' },
  { kind: 'user', table: 'users', id: 'user_id' },
  { kind: 'key', table: 'api_keys', id: 'key_id' },
] as const;

/** The spend_logs column naming each kind of scope. */
const spendColumns = { org: 'organization_id', team: 'team_id', user: 'user_id', key: 'key_id' } as const;

const CHUNK = 500;

export class BudgetSpendRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  /** Every organization, team, user and key with a max_budget or soft_budget. */
  async budgetedScopes(): Promise<BudgetedScope[]> {
    const scopes: BudgetedScope[] = [];
    for (const { kind, table, id } of tables) {
      const rows = await this.db
        .selectFrom(table)
        .select([`${id} as id`, 'budget_duration'])
        .where((eb) => eb.or([eb('max_budget', 'is not', null), eb('soft_budget', 'is not', null)]))
        .execute();
      for (const row of rows) scopes.push({ kind, id: String(row.id), budget_duration: row.budget_duration });
    }
    return scopes;
  }

  /** Total known cost (USD) per scope id of one kind, of requests settled in [start, end). */
  async spendBetween(
    kind: BudgetScopeKind,
    ids: readonly string[],
    start: number,
    end: number | null,
  ): Promise<Map<string, number>> {
    const column = spendColumns[kind];
    const totals = new Map<string, number>();
    for (let from = 0; from < ids.length; from += CHUNK) {
      let query = this.db
        .selectFrom('spend_logs')
        .select([`${column} as id`, (eb) => eb.fn.sum<number | string | null>('cost').as('total')])
        .where(column, 'in', ids.slice(from, from + CHUNK))
        .where('cost', 'is not', null)
        .where('created_at', '>=', start);
      if (end !== null) query = query.where('created_at', '<', end);
      for (const row of await query.groupBy(column).execute()) {
        if (row.id !== null) totals.set(row.id, Number(row.total ?? 0));
      }
    }
    return totals;
  }
}
