/** Gateway-wide settings kept in the database, shared by every replica (e.g. the generated key salt). */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../tables.ts';

export class SettingsRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async get(name: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('gateway_settings')
      .select('value')
      .where('name', '=', name)
      .executeTakeFirst();
    return row?.value;
  }

  /** Stores `value` unless a value exists, and returns whichever value is stored (first writer wins). */
  async getOrCreate(name: string, value: string): Promise<string> {
    await this.db
      .insertInto('gateway_settings')
      .values({ name, value })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    const stored = await this.get(name);
    if (stored === undefined) throw new Error(`gateway setting ${name} could not be stored`);
    return stored;
  }
}
