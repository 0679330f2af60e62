/**
 * Simulates a telemetry database that refuses writes to one table (a trigger that raises on insert), on
 * SQLite and PostgreSQL, and heals it again, so tests can fail and recover writes without stopping a
 * shared server.
 */
import { type Kysely, sql } from 'kysely';

export async function refuseInserts(db: Kysely<any>, postgres: boolean, table: string): Promise<void> {
  const name = `refuse_${table}`;
  if (postgres) {
    await sql
      .raw(
        `create or replace function ${name}() returns trigger language plpgsql as $$ begin raise exception '${table} is down'; end $$;
         create trigger ${name} before insert on ${table} for each row execute function ${name}();`,
      )
      .execute(db);
  } else {
    await sql
      .raw(
        `create trigger ${name} before insert on ${table} begin select raise(abort, '${table} is down'); end`,
      )
      .execute(db);
  }
}

export async function acceptInserts(db: Kysely<any>, postgres: boolean, table: string): Promise<void> {
  const name = `refuse_${table}`;
  await sql.raw(postgres ? `drop trigger ${name} on ${table}` : `drop trigger ${name}`).execute(db);
}
