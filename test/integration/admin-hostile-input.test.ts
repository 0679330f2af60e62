/**
 * Hostile admin input (issue 9), on SQLite and PostgreSQL: out-of-range durations and expiries, leap
 * seconds and NUL characters are refused with a 400 naming the field before anything is written, and a
 * row written by an older version can never make a list answer 500.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('hostile admin input on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const keyCount = async () => (await gateway.admin('GET', '/ui/api/keys?limit=500')).body.total as number;

  it.each([
    ['duration', { duration: '99999999999999999999d' }],
    ['duration', { duration: '36501d' }],
    ['expires_at', { expires_at: '2016-12-31T23:59:60Z' }],
    ['expires_at', { expires_at: '9999-12-31T23:59:59Z' }],
    ['key_name', { key_name: 'nul\u0000name' }],
    ['metadata.note', { metadata: { note: 'a\u0000b' } }],
  ])('refuses %s %j with 400 naming it, storing nothing', async (field, body) => {
    const before = await keyCount();
    const response = await gateway.admin('POST', '/ui/api/keys', body);
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe(field);
    expect(await keyCount()).toBe(before);
  });

  it('accepts the longest duration and an expiry within 100 years', async () => {
    expect((await gateway.admin('POST', '/ui/api/keys', { duration: '36500d' })).status).toBe(201);
    expect((await gateway.admin('POST', '/ui/api/keys', { expires_at: '2030-01-01T00:00:00Z' })).status).toBe(
      201,
    );
  });

  it('refuses NUL characters in path ids and query filters with 400, not 500', async () => {
    const inPath = await gateway.admin('GET', '/ui/api/keys/key%00x');
    expect(inPath.status).toBe(400);
    const inFilter = await gateway.admin('GET', '/ui/api/keys?team_id=t%00x');
    expect(inFilter.status).toBe(400);
    expect(inFilter.body.error.param).toBe('team_id');
    const team = await gateway.admin('POST', '/ui/api/teams', { team_id: 'nul-team', team_alias: 'x\u0000' });
    expect(team.status).toBe(400);
    expect((await gateway.admin('GET', '/ui/api/teams/nul-team')).status).toBe(404);
  });

  it('keeps listing keys when a stored row holds an impossible expiry or broken metadata', async () => {
    const created = await gateway.admin('POST', '/ui/api/keys', { key_name: 'legacy' });
    const { db } = gateway.gateway.database;
    await sql`update api_keys set expires_at = ${Number.MAX_SAFE_INTEGER}, metadata = ${'{broken'} where key_id = ${created.body.key_id}`.execute(
      db,
    );
    const listed = await gateway.admin('GET', '/ui/api/keys?limit=500');
    expect(listed.status).toBe(200);
    const legacy = listed.body.data.find((key: any) => key.key_id === created.body.key_id);
    expect(legacy).toMatchObject({ expires_at: null, metadata: null });
  });
});
