/**
 * Four-eyes through the keys' created_by chain (issue 25: an org admin approved its own manual MCP call
 * with a peer's key it had minted, and through a two-hop chain of keys). Nobody approves a call made
 * with a key they created, or one created with a key they created, and nobody approves with a key that
 * the caller's side created; a truly different administrator may. On both backends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { adminOk, bind, callTool, createKey, registerServer, setPolicy } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('MCP four-eyes along the key chain on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeMcpServer;
  /** Keys the master key minted for three administrators of organization A. */
  const own = {} as Record<'adminA' | 'peer' | 'other', { key: string; keyId: string }>;
  let text = 0;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend });
    upstream = await startFakeMcpServer({ mode: 'stateless' });
    await adminOk(gateway, 'POST', '/ui/api/organizations', { organization_id: 'org-a' });
    await adminOk(gateway, 'POST', '/ui/api/teams', { team_id: 'team-a', organization_id: 'org-a' });
    const admins = { adminA: 'admin-a', peer: 'admin-peer', other: 'admin-other' } as const;
    for (const [name, userId] of Object.entries(admins)) {
      await adminOk(gateway, 'POST', '/ui/api/users', {
        user_id: userId,
        team_id: 'team-a',
        role: 'org_admin',
      });
      own[name as keyof typeof own] = await createKey(gateway, { user_id: userId });
    }
    const { server_id } = await registerServer(gateway, { server_key: 'ops', base_url: upstream.url });
    await bind(gateway, { server_id, scope_type: 'team', scope_id: 'team-a' });
    await setPolicy(gateway, { server_id, tool_name: 'echo', require_approval: 'manual' });
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

  /** A manual call with `key`: its pending request id and the call to repeat once approved. */
  async function pendingCall(key: string) {
    const value = `call-${++text}`;
    const answer = await callTool(gateway.baseUrl, key, 'ops.echo', { text: value });
    expect(answer.error.code).toBe(-32008);
    return {
      id: answer.error.data.approval_request_id as string,
      repeat: () => callTool(gateway.baseUrl, key, 'ops.echo', { text: value }),
    };
  }

  const approve = (key: string, id: string) =>
    as(key, 'POST', `/ui/api/mcp-approval-requests/${id}/decision`, { status: 'approved' });

  async function canApprove(viewerKey: string, id: string): Promise<boolean> {
    const page = await as(viewerKey, 'GET', '/ui/api/mcp-approval-requests?limit=500');
    return page.body.data.find((item: any) => item.approval_request_id === id).capabilities.can_approve;
  }

  /** A member whom admin A gives a key and then makes an org admin: A knows that administrator's key. */
  async function promotedMember(userId: string, minterKey: string) {
    expect(
      (await as(own.adminA.key, 'POST', '/ui/api/users', { user_id: userId, team_id: 'team-a' })).status,
    ).toBe(201);
    const minted = await as(minterKey, 'POST', '/ui/api/keys', { user_id: userId });
    expect(minted.status).toBe(201);
    expect((await as(own.adminA.key, 'PUT', `/ui/api/users/${userId}`, { role: 'org_admin' })).status).toBe(
      200,
    );
    return { key: minted.body.key as string, keyId: minted.body.key_id as string };
  }

  it('refuses approving with a peer key the caller minted (a key written before minting for peers was refused)', async () => {
    // An earlier version let admin A mint a key for its peer: its row says A created it, and has no lineage.
    const peerKey = await createKey(gateway, { user_id: 'admin-peer', key_name: 'minted by A' });
    await gateway.gateway.database.db
      .updateTable('api_keys')
      .set({ created_by: 'user:admin-a', created_by_lineage: null })
      .where('key_id', '=', peerKey.keyId)
      .execute();
    const { id } = await pendingCall(own.adminA.key);
    expect(await canApprove(peerKey.key, id)).toBe(false);
    const refused = await approve(peerKey.key, id);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('approval_by_key_owner');
  });

  it('refuses approving with the key of a member the caller minted and then promoted', async () => {
    const promoted = await promotedMember('member-direct', own.adminA.key);
    const { id } = await pendingCall(own.adminA.key);
    expect(await canApprove(promoted.key, id)).toBe(false);
    expect((await approve(promoted.key, id)).status).toBe(403);
  });

  it('refuses approving a call made with a key created by a key the approver created (two hops)', async () => {
    // A mints a member's key and promotes the member; with that key A mints a key for a second member.
    const hop = await promotedMember('member-hop', own.adminA.key);
    expect(
      (await as(own.adminA.key, 'POST', '/ui/api/users', { user_id: 'member-end', team_id: 'team-a' }))
        .status,
    ).toBe(201);
    const end = await as(hop.key, 'POST', '/ui/api/keys', { user_id: 'member-end' });
    expect(end.body.created_by).toBe('user:member-hop');
    const { id } = await pendingCall(end.body.key);
    expect(await canApprove(own.adminA.key, id)).toBe(false);
    const refused = await approve(own.adminA.key, id);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('approval_by_key_owner');
    // The middle of the chain is refused too; an administrator outside it may approve.
    expect((await approve(hop.key, id)).status).toBe(403);
    expect((await approve(own.other.key, id)).status).toBe(200);
  });

  it('lets a truly different administrator approve, and the tool runs once', async () => {
    const call = await pendingCall(own.adminA.key);
    expect(await canApprove(own.other.key, call.id)).toBe(true);
    const approved = await approve(own.other.key, call.id);
    expect(approved.status).toBe(200);
    expect(approved.body.decided_by).toBe('user:admin-other');
    expect((await call.repeat()).result.content[0].text).toMatch(/^call-/);
  });
});
