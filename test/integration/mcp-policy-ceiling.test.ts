/**
 * Server-wide MCP tool policies as ceilings (issue 25: an org admin's team policy `require_approval:
 * never` overrode the operator's server-wide `manual`). A proxy administrator marks a server-wide policy
 * `is_ceiling`; narrower policies may then only tighten it: a write that loosens it is refused, and a
 * looser policy written before the ceiling is tightened when a call resolves. On both backends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { adminOk, bind, callTool, createKey, registerServer } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('MCP policy ceilings on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeMcpServer;
  let serverId: string;
  let orgAdminKey: string;
  let proxyAdminKey: string;
  let callerKey: string;
  let text = 0;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend, clock: new ManualClock() });
    upstream = await startFakeMcpServer({
      mode: 'stateless',
      extraTools: { ping: 'Answers.', lookup: 'Looks up.' },
    });
    serverId = (await registerServer(gateway, { server_key: 'ops', base_url: upstream.url })).server_id;
    await adminOk(gateway, 'POST', '/ui/api/organizations', { organization_id: 'org-a' });
    await adminOk(gateway, 'POST', '/ui/api/teams', { team_id: 'team-a', organization_id: 'org-a' });
    await adminOk(gateway, 'POST', '/ui/api/users', {
      user_id: 'admin-a',
      organization_id: 'org-a',
      role: 'org_admin',
    });
    await adminOk(gateway, 'POST', '/ui/api/users', { user_id: 'root', role: 'proxy_admin' });
    orgAdminKey = (await createKey(gateway, { user_id: 'admin-a' })).key;
    proxyAdminKey = (await createKey(gateway, { user_id: 'root' })).key;
    callerKey = (await createKey(gateway, { team_id: 'team-a' })).key;
    await bind(gateway, { server_id: serverId, scope_type: 'team', scope_id: 'team-a' });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  async function as(key: string, method: string, path: string, body?: unknown) {
    const response = await fetch(gateway.baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  const teamPolicy = (tool: string, fields: Record<string, unknown>) =>
    as(orgAdminKey, 'POST', '/ui/api/mcp-tool-policies', {
      server_id: serverId,
      tool_name: tool,
      scope_type: 'team',
      scope_id: 'team-a',
      ...fields,
    });
  const serverWide = (tool: string, fields: Record<string, unknown>) =>
    as(proxyAdminKey, 'POST', '/ui/api/mcp-tool-policies', {
      server_id: serverId,
      tool_name: tool,
      ...fields,
    });
  const call = (tool: string, args: Record<string, unknown> = {}) =>
    callTool(gateway.baseUrl, callerKey, `ops.${tool}`, args);
  const teamPolicies = async (tool: string) =>
    (
      await adminOk(gateway, 'GET', `/ui/api/mcp-tool-policies?server_id=${serverId}&scope_type=team`)
    ).data.filter((policy: any) => policy.tool_name === tool);

  it("lets a team policy loosen a server-wide default that is not a ceiling (the operator's choice)", async () => {
    expect((await serverWide('ping', { require_approval: 'manual' })).body.is_ceiling).toBe(false);
    expect((await teamPolicy('ping', { require_approval: 'never' })).status).toBe(201);
    expect((await call('ping')).result).toBeDefined();
  });

  it("refuses an organization administrator's policy that loosens a ceiling, naming the field and storing nothing", async () => {
    const ceiling = await serverWide('echo', { require_approval: 'manual', max_rpm: 5, is_ceiling: true });
    expect(ceiling.status).toBe(201);
    expect(ceiling.body).toMatchObject({ is_ceiling: true, scope_type: null });
    for (const [field, value] of [
      ['require_approval', 'never'],
      ['max_rpm', 6],
      ['max_rpm', null],
    ] as const) {
      const refused = await teamPolicy('echo', { [field]: value });
      expect(refused.status, `${field}: ${JSON.stringify(refused.body)}`).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'below_policy_ceiling', param: field });
    }
    expect(await teamPolicies('echo')).toEqual([]);
    // Tightening is allowed: a lower limit and the same approval.
    expect((await teamPolicy('echo', { require_approval: 'manual', max_rpm: 2 })).status).toBe(201);
  });

  it('keeps a tool a ceiling denies denied for narrower scopes', async () => {
    await serverWide('lookup', { enabled: false, is_ceiling: true });
    const refused = await teamPolicy('lookup', { enabled: true });
    expect(refused.body.error).toMatchObject({ code: 'below_policy_ceiling', param: 'enabled' });
    expect((await call('lookup')).error.code).toBe(-32003);
  });

  it('tightens a looser narrower policy written before the server-wide policy became a ceiling', async () => {
    await serverWide('add', { require_approval: 'never', max_rpm: 2 });
    expect((await teamPolicy('add', { require_approval: 'never', max_rpm: 100 })).status).toBe(201);
    const args = () => ({ a: ++text, b: 1 });
    expect((await call('add', args())).result).toBeDefined();
    // The proxy administrator makes the default a ceiling: the team's looser policy no longer wins.
    expect((await serverWide('add', { require_approval: 'manual', is_ceiling: true })).status).toBe(200);
    expect((await call('add', args())).error.code).toBe(-32008);
    // max_rpm: the team's 100 is held to the ceiling's 2 (the two calls above counted in this minute).
    await serverWide('add', { require_approval: 'never' });
    expect((await call('add', args())).error.code).toBe(-32029);
    // Clearing the ceiling makes it a default again: the team's own policy applies.
    expect((await serverWide('add', { is_ceiling: false })).body.is_ceiling).toBe(false);
    expect((await call('add', args())).result).toBeDefined();
  });

  it('lets only proxy administrators set or clear a ceiling', async () => {
    const serverWideByOrgAdmin = await as(orgAdminKey, 'POST', '/ui/api/mcp-tool-policies', {
      server_id: serverId,
      tool_name: 'fail',
      is_ceiling: true,
    });
    expect(serverWideByOrgAdmin.status).toBe(403);
    expect(serverWideByOrgAdmin.body.error.code).toBe('outside_admin_scope');
    // A ceiling is server-wide by definition: a scoped one is a 400 naming the field.
    const scoped = await teamPolicy('fail', { is_ceiling: true });
    expect(scoped.status).toBe(400);
    expect(scoped.body.error.param).toBe('is_ceiling');
    const ceiling = await serverWide('fail', { is_ceiling: true, max_concurrency: 3 });
    const cleared = await as(orgAdminKey, 'DELETE', `/ui/api/mcp-tool-policies/${ceiling.body.policy_id}`);
    expect(cleared.status).toBe(403);
    expect((await serverWide('fail', { is_ceiling: false })).status).toBe(200);
  });

  it.each([['yes'], [1], [null], [{}]])(
    'refuses is_ceiling %j with 400 naming it, storing nothing',
    async (value) => {
      const response = await serverWide('nodesc', { is_ceiling: value });
      expect(response.status).toBe(400);
      expect(response.body.error.param).toBe('is_ceiling');
      const all = await adminOk(gateway, 'GET', `/ui/api/mcp-tool-policies?server_id=${serverId}&limit=500`);
      expect(all.data.some((policy: any) => policy.tool_name === 'nodesc')).toBe(false);
    },
  );
});
