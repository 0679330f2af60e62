/**
 * Spec "Errors": an admin change whose invalidation-queue write fails is rolled back with 503 (issue 9;
 * it answered 500 before). A database trigger makes every queue insert fail, on SQLite and PostgreSQL.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('invalidation queue failure on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend });
    expect((await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-q', rpm_limit: 10 })).status).toBe(
      201,
    );
    const { db } = gateway.gateway.database;
    if (backend.schema) {
      await sql
        .raw(
          `create function refuse_queue() returns trigger language plpgsql as $$ begin raise exception 'queue is down'; end $$;
           create trigger refuse_queue before insert on cache_invalidations for each row execute function refuse_queue();`,
        )
        .execute(db);
    } else {
      await sql
        .raw(
          `create trigger refuse_queue before insert on cache_invalidations begin select raise(abort, 'queue is down'); end`,
        )
        .execute(db);
    }
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('answers 503 invalidation_queue_unavailable and keeps the stored value', async () => {
    const update = await gateway.admin('PUT', '/ui/api/teams/team-q', { rpm_limit: 20 });
    expect(update.status).toBe(503);
    expect(update.body.error.code).toBe('invalidation_queue_unavailable');
    const stored = await gateway.admin('GET', '/ui/api/teams/team-q');
    expect(stored.body.rpm_limit).toBe(10);
  });
});
