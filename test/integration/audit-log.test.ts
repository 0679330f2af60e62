/**
 * The audit log (issue 12, docs/audit.md) on both backends: every audited admin action writes exactly
 * one entry with before, after and the request id, secrets redacted; a failed change writes none;
 * GET /ui/api/audit filters and pages with a cursor; organization administrators see only theirs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { uniqueName } from '../support/unique-name.ts';

describe.each(await availableBackends())('audit log on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeMcpServer;

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await startFakeMcpServer({ mode: 'stateless', token: 'mcp-token-secret' });
    gateway = await startTestGateway({ backend });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  /** Calls the admin API with a request id of our own (the master key unless `token` is given). */
  async function call(method: string, path: string, body?: unknown, token = gateway.masterKey) {
    const requestId = uniqueName('req');
    const response = await fetch(gateway.baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        'x-request-id': requestId,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, requestId };
  }

  async function entriesOf(requestId: string) {
    const rows = await gateway.gateway.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('request_id', '=', requestId)
      .execute();
    return rows.map((row) => ({
      ...row,
      before: row.before === null ? null : JSON.parse(row.before),
      after: row.after === null ? null : JSON.parse(row.after),
    }));
  }

  /** Runs the call and returns its one audit entry, checking the common fields. */
  async function audited(method: string, path: string, body: unknown, action: string, token?: string) {
    const response = await call(method, path, body, token);
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    const entries = await entriesOf(response.requestId);
    expect(entries.map((entry) => entry.action)).toEqual([action]);
    const entry = entries[0]!;
    expect(entry.target_type).toBe(action.split('.')[0]);
    if (action.endsWith('.create')) expect(entry.before).toBeNull();
    else expect(entry.before).not.toBeNull();
    if (action.endsWith('.delete')) expect(entry.after).toBeNull();
    else expect(entry.after).not.toBeNull();
    return { entry, response };
  }

  it('records each identity action once, with before, after, actor and request id', async () => {
    let { entry } = await audited(
      'POST',
      '/ui/api/organizations',
      { organization_id: 'o-1' },
      'organization.create',
    );
    expect(entry).toMatchObject({
      actor: 'master',
      actor_key_id: null,
      target_id: 'o-1',
      organization_id: 'o-1',
    });
    ({ entry } = await audited('PUT', '/ui/api/organizations/o-1', { rpm_limit: 5 }, 'organization.update'));
    expect([entry.before.rpm_limit, entry.after.rpm_limit]).toEqual([null, 5]);
    ({ entry } = await audited(
      'POST',
      '/ui/api/teams',
      { team_id: 't-1', organization_id: 'o-1' },
      'team.create',
    ));
    expect(entry.organization_id).toBe('o-1');
    ({ entry } = await audited('POST', '/ui/api/teams', { team_id: 't-1', tpm_limit: 9 }, 'team.update'));
    expect([entry.before.tpm_limit, entry.after.tpm_limit]).toEqual([null, 9]);
    ({ entry } = await audited('PUT', '/ui/api/teams/t-1', { team_alias: 'One' }, 'team.update'));
    ({ entry } = await audited('POST', '/ui/api/users', { user_id: 'u-1', team_id: 't-1' }, 'user.create'));
    expect(entry.organization_id).toBe('o-1'); // through the user's team
    await audited('PUT', '/ui/api/users/u-1', { email: 'u1@example.com' }, 'user.update');
    const created = await audited('POST', '/ui/api/keys', { user_id: 'u-1', key_name: 'k' }, 'key.create');
    const keyId = created.response.body.key_id;
    expect(created.entry).toMatchObject({ target_id: keyId, organization_id: 'o-1' });
    ({ entry } = await audited('PUT', `/ui/api/keys/${keyId}`, { blocked: true }, 'key.update'));
    expect([entry.before.blocked, entry.after.blocked]).toEqual([false, true]);
    ({ entry } = await audited('DELETE', `/ui/api/keys/${keyId}`, undefined, 'key.delete'));
    expect(entry).toMatchObject({ organization_id: 'o-1', before: { key_id: keyId } });
    await audited('DELETE', '/ui/api/users/u-1', undefined, 'user.delete');
    await audited('DELETE', '/ui/api/teams/t-1', undefined, 'team.delete');
    await audited('DELETE', '/ui/api/organizations/o-1', undefined, 'organization.delete');
  });

  it('never stores a key secret or its hash', async () => {
    const { response, entry } = await audited(
      'POST',
      '/ui/api/keys',
      { key_name: 'secret-test' },
      'key.create',
    );
    expect(entry.after.key_hash).toBe('REDACTED');
    const { key_hash: hash } = await gateway.gateway.database.db
      .selectFrom('api_keys')
      .select('key_hash')
      .where('key_id', '=', response.body.key_id)
      .executeTakeFirstOrThrow();
    const stored = JSON.stringify(
      await gateway.gateway.database.db.selectFrom('audit_log').selectAll().execute(),
    );
    expect(stored).not.toContain(response.body.key);
    expect(stored).not.toContain(hash);
  });

  it('records the LiteLLM aliases as the same actions', async () => {
    const generated = await call('POST', '/key/generate', { key_alias: 'lite' });
    expect((await entriesOf(generated.requestId)).map((entry) => entry.action)).toEqual(['key.create']);
    const updated = await call('POST', '/key/update', { key: generated.body.key, rpm_limit: 3 });
    expect((await entriesOf(updated.requestId)).map((entry) => entry.action)).toEqual(['key.update']);
    const deleted = await call('POST', '/key/delete', { keys: [generated.body.key] });
    expect((await entriesOf(deleted.requestId)).map((entry) => entry.action)).toEqual(['key.delete']);
    const team = await call('POST', '/team/new', { team_id: 'lite-team' });
    expect((await entriesOf(team.requestId)).map((entry) => entry.action)).toEqual(['team.create']);
    const user = await call('POST', '/user/new', { user_id: 'lite-user' });
    expect((await entriesOf(user.requestId)).map((entry) => entry.action).sort()).toEqual([
      'key.create',
      'user.create',
    ]);
  });

  it('records MCP servers, bindings, policies and approval decisions, tokens redacted', async () => {
    const server = await audited(
      'POST',
      '/ui/api/mcp-servers',
      {
        server_key: 'audited',
        base_url: upstream.url,
        auth_mode: 'bearer',
        auth_config: { token: 'mcp-token-secret' },
      },
      'mcp_server.create',
    );
    expect(server.entry.after.auth_token_sealed).toBe('REDACTED');
    const serverId = server.response.body.server_id;
    const update = await audited(
      'PATCH',
      `/ui/api/mcp-servers/${serverId}`,
      { name: 'Renamed' },
      'mcp_server.update',
    );
    expect([update.entry.before.name, update.entry.after.name]).toEqual(['audited', 'Renamed']);
    await call('POST', '/ui/api/organizations', { organization_id: 'o-mcp' });
    await call('POST', '/ui/api/teams', { team_id: 't-mcp', organization_id: 'o-mcp' });
    const binding = { server_id: serverId, scope_type: 'team', scope_id: 't-mcp' };
    const bound = await audited('POST', '/ui/api/mcp-bindings', binding, 'mcp_binding.create');
    expect(bound.entry.organization_id).toBe('o-mcp');
    await audited('POST', '/ui/api/mcp-bindings', { ...binding, enabled: false }, 'mcp_binding.update');
    await audited(
      'DELETE',
      `/ui/api/mcp-bindings/${bound.response.body.binding_id}`,
      undefined,
      'mcp_binding.delete',
    );
    const policy = { server_id: serverId, tool_name: 'echo', require_approval: 'manual' };
    const set = await audited('POST', '/ui/api/mcp-tool-policies', policy, 'mcp_policy.create');
    expect(set.entry.organization_id).toBeNull(); // server-wide
    await audited('POST', '/ui/api/mcp-tool-policies', { ...policy, max_rpm: 5 }, 'mcp_policy.update');
    await audited(
      'DELETE',
      `/ui/api/mcp-tool-policies/${set.response.body.policy_id}`,
      undefined,
      'mcp_policy.delete',
    );
    for (const [id, status, action] of [
      ['apr-audit-1', 'approved', 'approval.approve'],
      ['apr-audit-2', 'rejected', 'approval.reject'],
    ] as const) {
      await insertPendingApproval(id, serverId);
      const decided = await audited(
        'POST',
        `/ui/api/mcp-approval-requests/${id}/decision`,
        { status },
        action,
      );
      expect([decided.entry.before.status, decided.entry.after.status]).toEqual(['pending', status]);
      expect(decided.entry.after.arguments).toBeUndefined();
    }
    const deleted = await audited(
      'DELETE',
      `/ui/api/mcp-servers/${serverId}`,
      undefined,
      'mcp_server.delete',
    );
    expect(JSON.stringify(deleted.entry)).not.toContain('mcp-token-secret');
  });

  it('writes nothing for a change that fails', async () => {
    const before = await countEntries();
    expect((await call('PUT', '/ui/api/teams/no-such-team', { rpm_limit: 1 })).status).toBe(404);
    expect(
      (await call('POST', '/ui/api/teams', { team_id: 't-bad', organization_id: 'no-org' })).status,
    ).toBe(400);
    expect((await call('DELETE', '/ui/api/keys/no-such-key')).status).toBe(404);
    expect((await call('DELETE', '/ui/api/mcp-bindings/no-such-binding')).status).toBe(404);
    expect(await countEntries()).toBe(before);
  });

  it('filters and pages the log with a cursor, newest first', async () => {
    const ids = ['page-1', 'page-2', 'page-3', 'page-4', 'page-5'];
    for (const id of ids) await call('POST', '/ui/api/teams', { team_id: id });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `target_type=team&action=team.create&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await call('GET', `/ui/api/audit?${query}`);
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((entry: { target_id: string }) => entry.target_id));
      expect(page.body.has_more).toBe(page.body.next_cursor !== null);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen.filter((id) => id.startsWith('page-'))).toEqual([...ids].reverse());
    expect(new Set(seen).size).toBe(seen.length);
    const one = await call('GET', '/ui/api/audit?target_id=page-3');
    expect(one.body.data).toMatchObject([{ object: 'audit_entry', action: 'team.create', actor: 'master' }]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await call('GET', `/ui/api/audit?from=${future}`)).body.data).toEqual([]);
    expect((await call('GET', `/ui/api/audit?to=${future}&actor=nobody`)).body.data).toEqual([]);
    expect((await call('GET', '/ui/api/audit?cursor=bm90LWEtY3Vyc29y')).body.error.param).toBe('cursor');
    expect((await call('GET', '/ui/api/audit?from=yesterday')).body.error.param).toBe('from');
    expect((await call('GET', '/ui/api/audit?limit=501')).status).toBe(400);
  });

  it('shows an organization administrator only the entries of their organization', async () => {
    for (const org of ['o-scope-a', 'o-scope-b']) {
      await call('POST', '/ui/api/organizations', { organization_id: org });
      await call('POST', '/ui/api/teams', { team_id: `${org}-team`, organization_id: org });
    }
    await call('POST', '/ui/api/users', {
      user_id: 'scope-admin',
      role: 'org_admin',
      organization_id: 'o-scope-a',
    });
    const adminKey = (await call('POST', '/ui/api/keys', { user_id: 'scope-admin' })).body;
    const own = await audited(
      'PUT',
      '/ui/api/teams/o-scope-a-team',
      { rpm_limit: 2 },
      'team.update',
      adminKey.key,
    );
    expect(own.entry).toMatchObject({ actor: 'user:scope-admin', actor_key_id: adminKey.key_id });
    for (const query of ['', '?organization_id=o-scope-b', '?target_id=o-scope-b-team']) {
      const page = await call(
        'GET',
        `/ui/api/audit${query}&limit=500`.replace('&', query ? '&' : '?'),
        undefined,
        adminKey.key,
      );
      expect(page.status).toBe(200);
      for (const entry of page.body.data) expect(entry.organization_id).toBe('o-scope-a');
      if (!query)
        expect(page.body.data.map((entry: { request_id: string }) => entry.request_id)).toContain(
          own.response.requestId,
        );
    }
    const all = await call('GET', '/ui/api/audit?organization_id=o-scope-b');
    expect(all.body.data.length).toBeGreaterThan(0);
  });

  async function countEntries(): Promise<number> {
    const row = await gateway.gateway.database.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async function insertPendingApproval(id: string, serverId: string): Promise<void> {
    await gateway.gateway.database.db
      .insertInto('mcp_approval_requests')
      .values({
        approval_request_id: id,
        server_id: serverId,
        tool_name: 'echo',
        call_hash: `hash-${id}`,
        key_id: null,
        key_owner_user_id: null,
        arguments: JSON.stringify({ text: 'hi' }),
        forwarded_header_names: '[]',
        status: 'pending',
        created_at: Date.now(),
        decided_at: null,
        decided_by: null,
        decision_comment: null,
        consumed_at: null,
      })
      .execute();
  }
});
