/** Spend budgets (`max_budget`, `soft_budget` in USD, `budget_duration`) on organizations, teams, users and keys. */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['organizations', 'teams', 'users', 'api_keys'] as const) {
    await db.schema.alterTable(table).addColumn('max_budget', 'double precision').execute();
    await db.schema.alterTable(table).addColumn('soft_budget', 'double precision').execute();
    await db.schema.alterTable(table).addColumn('budget_duration', 'text').execute();
  }
}
