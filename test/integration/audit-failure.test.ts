/**
 * The audit entry is part of the change (issue 12): when it cannot be written the change is rolled
 * back with 503 audit_log_unavailable. A database trigger refuses every audit insert, on SQLite and
 * PostgreSQL, as the spend tests do for the telemetry tables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { refuseInserts } from '../support/database-outage.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('audit write failure on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend });
    expect((await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-a', rpm_limit: 10 })).status).toBe(
      201,
    );
    await refuseInserts(gateway.gateway.database.db, backend.schema !== undefined, 'audit_log');
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  async function count(table: 'teams' | 'api_keys' | 'mcp_servers' | 'mcp_bindings'): Promise<number> {
    const row = await gateway.gateway.database.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  function expectRefused(response: { status: number; body: any }): void {
    expect(response.status).toBe(503);
    expect(response.body.error.code).toBe('audit_log_unavailable');
  }

  it('rolls back identity changes: an update, a create and a delete', async () => {
    expectRefused(await gateway.admin('PUT', '/ui/api/teams/team-a', { rpm_limit: 20 }));
    expect((await gateway.admin('GET', '/ui/api/teams/team-a')).body.rpm_limit).toBe(10);
    expectRefused(await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-b' }));
    expectRefused(await gateway.admin('POST', '/ui/api/keys', { team_id: 'team-a' }));
    expectRefused(await gateway.admin('DELETE', '/ui/api/teams/team-a'));
    expect([await count('teams'), await count('api_keys')]).toEqual([1, 0]);
  });

  it('rolls back MCP changes: a server and a binding', async () => {
    expectRefused(
      await gateway.admin('POST', '/ui/api/mcp-servers', {
        server_key: 'refused',
        base_url: 'http://127.0.0.1:9/mcp',
      }),
    );
    expect(await count('mcp_servers')).toBe(0);
    const { db } = gateway.gateway.database;
    await db
      .insertInto('mcp_servers')
      .values({
        server_id: 'mcps-direct',
        server_key: 'direct',
        name: 'direct',
        transport: 'streamable_http',
        base_url: 'http://127.0.0.1:9/mcp',
        enabled: 1,
        auth_mode: 'none',
        auth_token_sealed: null,
        forwarded_headers_allowlist: '[]',
        request_timeout_ms: 1_000,
        source: 'api',
        tools_refreshed_at: null,
        last_refresh_error: null,
        created_at: Date.now(),
        updated_at: Date.now(),
      })
      .execute();
    expectRefused(
      await gateway.admin('POST', '/ui/api/mcp-bindings', {
        server_id: 'mcps-direct',
        scope_type: 'team',
        scope_id: 'team-a',
      }),
    );
    expect(await count('mcp_bindings')).toBe(0);
    expectRefused(await gateway.admin('PATCH', '/ui/api/mcp-servers/mcps-direct', { name: 'renamed' }));
    expect((await gateway.admin('GET', '/ui/api/mcp-servers/mcps-direct')).body.name).toBe('direct');
  });
});
