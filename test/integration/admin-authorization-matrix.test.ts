/**
 * The authorization matrix of the admin API (issue 9: an admin of one organization changed another's
 * team): every /ui/api route, taken from the OpenAPI document so a new route cannot escape, called by
 * no key, a revoked key, a member, an organization administrator of another organization and of the
 * right one, a proxy administrator and the master key, on both storage backends. Key minting and key
 * moves for every pair of caller and recipient role are admin-key-authorization-matrix.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminScopeRules } from '../../src/http/plugins/admin-scope.ts';
import type { SpendLogsTable } from '../../src/store/db/tables.ts';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { adminOk, bind, callTool, createKey, registerServer, setPolicy } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

type Actor = 'none' | 'revoked' | 'member' | 'otherOrgAdmin' | 'orgAdmin' | 'proxyAdmin' | 'master';
const actors: Actor[] = ['none', 'revoked', 'member', 'otherOrgAdmin', 'orgAdmin', 'proxyAdmin', 'master'];

/** DELETE routes run last, dependants first, so every other route still finds its fixtures. */
const deleteOrder = [
  'tier-policies',
  'mcp-bindings',
  'mcp-tool-policies',
  'keys',
  'users',
  'teams',
  'organizations',
  'mcp-servers',
];

describe.each(await availableBackends())('the admin authorization matrix on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeMcpServer;
  const keys = {} as Record<Exclude<Actor, 'none' | 'master'>, string>;
  const ids: Record<string, string> = {};
  // Each route's two unauthenticated calls count as failed admin authentications: the clock moves a
  // minute per route so the throttle (20 a minute) never answers for the matrix.
  const clock = new ManualClock(Date.parse('2026-11-24T12:00:00Z'));

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await startFakeMcpServer({ mode: 'stateless' });
    gateway = await startTestGateway({ backend, clock });
    for (const org of ['org-a', 'org-b'])
      await adminOk(gateway, 'POST', '/ui/api/organizations', { organization_id: org });
    await adminOk(gateway, 'POST', '/ui/api/teams', { team_id: 'team-a', organization_id: 'org-a' });
    await adminOk(gateway, 'POST', '/ui/api/teams', { team_id: 'team-b', organization_id: 'org-b' });
    await adminOk(gateway, 'POST', '/ui/api/users', { user_id: 'user-a', team_id: 'team-a' });
    await adminOk(gateway, 'POST', '/ui/api/users', {
      user_id: 'admin-a',
      organization_id: 'org-a',
      role: 'org_admin',
    });
    await adminOk(gateway, 'POST', '/ui/api/users', {
      user_id: 'admin-b',
      organization_id: 'org-b',
      role: 'org_admin',
    });
    await adminOk(gateway, 'POST', '/ui/api/users', { user_id: 'root', role: 'proxy_admin' });
    await adminOk(gateway, 'POST', '/ui/api/users', { user_id: 'member-b', team_id: 'team-b' });
    keys.orgAdmin = (await createKey(gateway, { user_id: 'admin-a' })).key;
    keys.otherOrgAdmin = (await createKey(gateway, { user_id: 'admin-b' })).key;
    keys.proxyAdmin = (await createKey(gateway, { user_id: 'root' })).key;
    keys.member = (await createKey(gateway, { user_id: 'member-b' })).key;
    const revoked = await createKey(gateway, { user_id: 'root' });
    await adminOk(gateway, 'DELETE', `/ui/api/keys/${revoked.keyId}`);
    keys.revoked = revoked.key;
    const caller = await createKey(gateway, { team_id: 'team-a' });
    ids.key_id = (await createKey(gateway, { team_id: 'team-a' })).keyId;
    ids.server_id = (
      await registerServer(gateway, { server_key: 'matrix', base_url: upstream.url })
    ).server_id;
    ids.binding_id = (
      await bind(gateway, { server_id: ids.server_id, scope_type: 'team', scope_id: 'team-a' })
    ).binding_id;
    const policy = { server_id: ids.server_id, tool_name: 'echo', scope_type: 'team', scope_id: 'team-a' };
    ids.policy_id = (await setPolicy(gateway, { ...policy, require_approval: 'manual' })).policy_id;
    ids.approval_request_id = (
      await callTool(gateway.baseUrl, caller.key, 'matrix.echo', { text: 'x' })
    ).error.data.approval_request_id;
    ids.tier_policy_id = (
      await adminOk(gateway, 'POST', '/ui/api/tier-policies', {
        organization_id: 'org-a',
        model: 'demo',
        output_tpm_limit: 1000,
      })
    ).tier_policy_id;
    Object.assign(ids, { org_id: 'org-a', team_id: 'team-a', user_id: 'user-a' });
    // One spend record of organization A, so exports of spend show what each administrator may see.
    await gateway.gateway.database.db
      .insertInto('spend_logs')
      .values(spendRecordOfTeamA(ids.key_id, clock.now()))
      .execute();
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  async function routes(): Promise<Array<{ method: string; path: string }>> {
    const document = (await (await fetch(`${gateway.baseUrl}/openapi.json`)).json()) as any;
    const found: Array<{ method: string; path: string }> = [];
    for (const [path, operations] of Object.entries(document.paths as Record<string, object>)) {
      if (!path.startsWith('/ui/api/')) continue;
      for (const method of Object.keys(operations)) found.push({ method: method.toUpperCase(), path });
    }
    const rank = (route: { method: string; path: string }) =>
      route.method === 'DELETE'
        ? 1 + deleteOrder.findIndex((noun) => route.path.startsWith(`/ui/api/${noun}`))
        : 0;
    return found.sort((a, b) => rank(a) - rank(b));
  }

  function bodyFor(method: string, path: string): unknown {
    if (method === 'GET' || method === 'DELETE') return undefined;
    const bodies: Record<string, unknown> = {
      'POST /ui/api/organizations': { organization_id: 'org-new' },
      'POST /ui/api/teams': { team_id: 'team-a', organization_id: 'org-a' },
      'POST /ui/api/users': { user_id: 'user-a', team_id: 'team-a' },
      'POST /ui/api/keys': { team_id: 'team-a' },
      'POST /ui/api/mcp-servers': { server_key: 'matrix-new', base_url: upstream.url },
      'PATCH /ui/api/mcp-servers/{server_id}': { name: 'renamed' },
      'POST /ui/api/mcp-bindings': { server_id: ids.server_id, scope_type: 'team', scope_id: 'team-a' },
      'POST /ui/api/mcp-tool-policies': {
        server_id: ids.server_id,
        tool_name: 'add',
        scope_type: 'team',
        scope_id: 'team-a',
      },
      'POST /ui/api/mcp-approval-requests/{approval_request_id}/decision': { status: 'rejected' },
      'POST /ui/api/tier-policies': { organization_id: 'org-a', model: 'matrix', output_tpm_limit: 10 },
      'PUT /ui/api/tier-policies/{tier_policy_id}': { output_tpm_limit: 500 },
      'PATCH /ui/api/settings': { general_settings: { request_logging: true } },
    };
    return bodies[`${method} ${path}`] ?? { rpm_limit: 100 };
  }

  async function call(actor: Actor, method: string, path: string) {
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!);
    const bearer = actor === 'none' ? undefined : actor === 'master' ? gateway.masterKey : keys[actor];
    const body = bodyFor(method, path);
    const response = await fetch(`${gateway.baseUrl}${url}`, {
      method,
      headers: {
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, text };
  }

  it('has a scope rule for every admin route', async () => {
    for (const { method, path } of await routes()) {
      const fastifyPath = path.replace(/\{(\w+)\}/g, ':$1');
      expect(adminScopeRules[`${method} ${fastifyPath}`], `${method} ${path}`).toBeDefined();
    }
  });

  it("shows an organization administrator an MCP server's bindings and policies of its organization and the server-wide defaults, never another's", async () => {
    const { server_id } = await registerServer(gateway, {
      server_key: 'matrix-view',
      base_url: upstream.url,
    });
    for (const team of ['team-a', 'team-b']) {
      await bind(gateway, { server_id, scope_type: 'team', scope_id: team });
      await setPolicy(gateway, {
        server_id,
        tool_name: 'echo',
        scope_type: 'team',
        scope_id: team,
        max_rpm: 5,
      });
    }
    await setPolicy(gateway, { server_id, tool_name: '*', require_approval: 'manual' });
    const scopes = async (actor: Actor) => {
      const response = await fetch(
        `${gateway.baseUrl}/ui/api/mcp-servers/${server_id}?organization_id=org-b`,
        {
          headers: {
            authorization: `Bearer ${actor === 'master' ? gateway.masterKey : keys[actor as 'orgAdmin']}`,
          },
        },
      );
      expect(response.status).toBe(200);
      const detail = (await response.json()) as any;
      const scope = (item: { scope_type: string | null; scope_id: string | null }) =>
        item.scope_type === null ? 'server-wide' : `${item.scope_type}:${item.scope_id}`;
      return { bindings: detail.bindings.map(scope).sort(), policies: detail.policies.map(scope).sort() };
    };
    // Organization A's administrator asks for B's part: the gateway narrows it to A's anyway.
    expect(await scopes('orgAdmin')).toEqual({
      bindings: ['team:team-a'],
      policies: ['server-wide', 'team:team-a'],
    });
    expect(await scopes('otherOrgAdmin')).toEqual({
      bindings: ['team:team-b'],
      policies: ['server-wide', 'team:team-b'],
    });
    // The master key may narrow the view with the same filter.
    expect(await scopes('master')).toEqual({
      bindings: ['team:team-b'],
      policies: ['server-wide', 'team:team-b'],
    });
  });

  it("lists an organization's users who belong to it through their team as well as directly", async () => {
    const userIds = async (actor: Actor, query = '') => {
      const { status, text } = await call(actor, 'GET', `/ui/api/users${query}`);
      expect(status).toBe(200);
      return (JSON.parse(text).data as Array<{ user_id: string }>).map((user) => user.user_id).sort();
    };
    // user-a is in team-a of org-a with no organization_id of its own; admin-a names org-a directly.
    expect(await userIds('orgAdmin')).toEqual(['admin-a', 'user-a']);
    expect(await userIds('otherOrgAdmin')).toEqual(['admin-b', 'member-b']);
    expect(await userIds('master', '?organization_id=org-a')).toEqual(['admin-a', 'user-a']);
  });

  it('lists a user by their own organization and a key by its team, as ownership is decided, after a team moves', async () => {
    // drifter names org-b and is in team-move, which then moves to org-a: drifter stays org-b's, and a
    // key of team-move used by drifter is org-a's (a key's team decides).
    await adminOk(gateway, 'POST', '/ui/api/teams', { team_id: 'team-move', organization_id: 'org-b' });
    await adminOk(gateway, 'POST', '/ui/api/users', {
      user_id: 'drifter',
      organization_id: 'org-b',
      team_id: 'team-move',
    });
    const { keyId } = await createKey(gateway, {
      team_id: 'team-move',
      user_id: 'drifter',
      key_name: 'moved',
    });
    await adminOk(gateway, 'PUT', '/ui/api/teams/team-move', { organization_id: 'org-a' });
    try {
      const ids = async (actor: Actor, path: string, field: string) => {
        const { status, text } = await call(actor, 'GET', path);
        expect(status).toBe(200);
        return (JSON.parse(text).data as Array<Record<string, string>>).map((row) => row[field]);
      };
      expect(await ids('orgAdmin', '/ui/api/users', 'user_id')).not.toContain('drifter');
      expect(await ids('otherOrgAdmin', '/ui/api/users', 'user_id')).toContain('drifter');
      expect(await ids('orgAdmin', '/ui/api/keys', 'key_id')).toContain(keyId);
      expect(await ids('otherOrgAdmin', '/ui/api/keys', 'key_id')).not.toContain(keyId);
      // Joining a team of another organization than one's own is refused, also when only the team is sent.
      const moved = await gateway.admin('PUT', '/ui/api/users/drifter', { team_id: 'team-a' });
      expect(moved.status).toBe(400);
      expect(moved.body.error.param).toBe('team_id');
    } finally {
      await adminOk(gateway, 'DELETE', `/ui/api/keys/${keyId}`);
      await adminOk(gateway, 'DELETE', '/ui/api/users/drifter');
      await adminOk(gateway, 'DELETE', '/ui/api/teams/team-move');
    }
  });

  it('refuses an organization administrator taking a team or user out of their organization', async () => {
    for (const path of ['/ui/api/teams/team-a', '/ui/api/users/admin-a']) {
      const response = await fetch(`${gateway.baseUrl}${path}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${keys.orgAdmin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ organization_id: null }),
      });
      expect(response.status, path).toBe(403);
      expect(((await response.json()) as any).error.code).toBe('outside_admin_scope');
    }
    expect((await adminOk(gateway, 'GET', '/ui/api/teams/team-a')).organization_id).toBe('org-a');
    expect((await adminOk(gateway, 'GET', '/ui/api/users/admin-a')).organization_id).toBe('org-a');
  });

  it("refuses an organization administrator's key change that would hand the key to another organization", async () => {
    // Both keys are organization A's through team-a; one's user is B's member, the other's A's user.
    const toB = await createKey(gateway, { team_id: 'team-a', user_id: 'member-b', key_name: 'shared' });
    const staysA = await createKey(gateway, { team_id: 'team-a', user_id: 'user-a', key_name: 'own' });
    const put = async (keyId: string, body: object) => {
      const response = await fetch(`${gateway.baseUrl}/ui/api/keys/${keyId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${keys.orgAdmin}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    try {
      const refused = await put(toB.keyId, { team_id: null });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('outside_admin_scope');
      expect((await adminOk(gateway, 'GET', `/ui/api/keys/${toB.keyId}`)).team_id).toBe('team-a');
      // Clearing the user keeps the key in team-a; clearing the team of a key whose user is A's keeps it in A.
      expect((await put(toB.keyId, { user_id: null })).status).toBe(200);
      expect((await put(staysA.keyId, { team_id: null })).status).toBe(200);
    } finally {
      await adminOk(gateway, 'DELETE', `/ui/api/keys/${toB.keyId}`);
      await adminOk(gateway, 'DELETE', `/ui/api/keys/${staysA.keyId}`);
    }
  });

  it('lets each actor do exactly what its role allows on every route', async () => {
    const found = await routes();
    expect(found.length).toBeGreaterThanOrEqual(30);
    for (const { method, path } of found) {
      const rule = adminScopeRules[`${method} ${path.replace(/\{(\w+)\}/g, ':$1')}`]!;
      clock.advance(61_000);
      for (const actor of actors) {
        const { status, text } = await call(actor, method, path);
        const where = `${actor}: ${method} ${path} → ${status} ${text.slice(0, 160)}`;
        if (actor === 'none' || actor === 'revoked') expect(status, where).toBe(401);
        else if (actor === 'member') expect(status, where).toBe(403);
        else if (actor === 'proxyAdmin' || actor === 'master')
          expect([401, 403], where).not.toContain(status);
        else if (rule.kind === 'proxy') expect(status, where).toBe(403);
        else if (rule.kind === 'open') expect([401, 403], where).not.toContain(status);
        else if (rule.kind === 'list') {
          expect(status, where).toBe(200);
          // Another organization's administrator sees none of organization A's things.
          if (actor === 'otherOrgAdmin') expect(text, where).not.toMatch(/org-a|team-a|user-a/);
          else if (!path.includes('approval')) expect(text, where).toMatch(/org-a|team-a|user-a/);
        } else if (actor === 'otherOrgAdmin') expect(status, where).toBe(403);
        else expect([401, 403], where).not.toContain(status);
      }
    }
  });
});

function spendRecordOfTeamA(keyId: string | undefined, createdAt: number): SpendLogsTable {
  return {
    spend_id: 'spend-matrix',
    request_id: 'req-matrix',
    created_at: createdAt,
    key_id: keyId ?? null,
    user_id: null,
    team_id: 'team-a',
    organization_id: 'org-a',
    model: 'demo',
    model_group: 'demo',
    deployment_id: 'demo-fake',
    endpoint: '/v1/chat/completions',
    attempts: 1,
    stream: 0,
    status: 200,
    usage_known: 1,
    usage_estimated: 0,
    prompt_tokens: 1,
    completion_tokens: 1,
    reasoning_tokens: null,
    cached_tokens: null,
    cache_creation_tokens: null,
    total_tokens: 2,
    cost: 0.001,
    latency_ms: 10,
    ttft_ms: null,
    cache_hit: 0,
  };
}
