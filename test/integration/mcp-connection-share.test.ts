/**
 * Each API key's share of a shared MCP server's connections (issue 25: one tenant occupied the
 * server's 32 pooled connections and another tenant's call waited 14 s). A fake upstream holds `hold`
 * calls until the test releases them: a key over its share waits in a short queue, then is refused
 * with -32029, and another key's call goes through at once. On both backends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.ts';
import { startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { adminOk, bind, callTool, createKey, registerServer, setPolicy } from '../support/mcp-fixtures.ts';
import { startTestGateway } from '../support/start-gateway.ts';

/** Polls `check` until it holds (no fixed sleeps), failing with `what` after a generous while. */
async function eventually(what: string, check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 15_000; !check(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface Tenant {
  key: string;
  keyId: string;
}

async function setUp(backend: Backend, generalSettings = '') {
  const gateway = await startTestGateway({ backend, generalSettings });
  const upstream = await startFakeMcpServer({ mode: 'stateless', extraTools: { hold: 'Holds the call.' } });
  const { server_id } = await registerServer(gateway, { server_key: 'shared', base_url: upstream.url });
  const tenants: Tenant[] = [];
  for (const name of ['a', 'b']) {
    const tenant = await createKey(gateway, { key_name: `tenant-${name}` });
    await bind(gateway, { server_id, scope_type: 'api_key', scope_id: tenant.keyId });
    tenants.push(tenant);
  }
  const client = () => {
    const server = gateway.gateway.mcp.catalog.snapshot.byKey.get('shared')!;
    return gateway.gateway.mcp.clients.for(server.record);
  };
  const hold = (tenant: Tenant) => callTool(gateway.baseUrl, tenant.key, 'shared.hold');
  const echo = (tenant: Tenant) => callTool(gateway.baseUrl, tenant.key, 'shared.echo', { text: 'hi' });
  return { gateway, upstream, tenants: tenants as [Tenant, Tenant], client, hold, echo };
}

describe.each(await availableBackends())('MCP connection share per key on %s', (_name, makeBackend) => {
  let backend: Backend;
  let setup: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    backend = makeBackend();
    setup = await setUp(backend, '  mcp_connections_per_key: 2\n');
  });
  afterAll(async () => {
    setup?.upstream.release();
    await setup?.gateway.close();
    await setup?.upstream.close();
    await backend?.cleanup();
  });

  it('queues a key over its share, refuses it with -32029 once its queue is full, and lets other keys through', async () => {
    const { upstream, tenants, client, hold, echo } = setup;
    const [a, b] = tenants;
    const first = [hold(a), hold(a)];
    await eventually('two calls of A are held upstream', () => upstream.held().now === 2);
    const queued = [hold(a), hold(a)];
    await eventually('two calls of A wait in its queue', () => client().shareUsage(a.keyId).waiting === 2);
    const refused = await hold(a);
    expect(refused.error).toMatchObject({ code: -32029, data: { retry_after_seconds: 1 } });
    expect(refused.error.message).toContain('its share of the server');
    // Tenant B is not held up by A: its call goes through while A's calls hold their connections.
    expect((await echo(b)).result.content[0].text).toBe('hi');
    expect(upstream.held().now).toBe(2);
    upstream.release();
    for (const answer of await Promise.all(first)) expect(answer.result).toBeDefined();
    await eventually('the queued calls of A reach the upstream', () => upstream.held().now === 2);
    upstream.release();
    for (const answer of await Promise.all(queued)) expect(answer.result).toBeDefined();
    // A never had more than its two connections; the refused call never reached the upstream.
    expect(upstream.held().most).toBe(2);
    expect(upstream.calls('hold')).toHaveLength(4);
    expect(client().shareUsage(a.keyId)).toEqual({ active: 0, waiting: 0 });
  });

  it('keeps the approval of a call refused for its share, for the retry', async () => {
    const { gateway, upstream, client } = setup;
    const serverId = gateway.gateway.mcp.catalog.snapshot.byKey.get('shared')!.record.server_id;
    const c = await createKey(gateway, { key_name: 'tenant-c' });
    await bind(gateway, { server_id: serverId, scope_type: 'api_key', scope_id: c.keyId });
    await setPolicy(gateway, {
      server_id: serverId,
      tool_name: 'echo',
      scope_type: 'api_key',
      scope_id: c.keyId,
      require_approval: 'manual',
    });
    const echo = () => callTool(gateway.baseUrl, c.key, 'shared.echo', { text: 'approved once' });
    const id = (await echo()).error.data.approval_request_id;
    await adminOk(gateway, 'POST', `/ui/api/mcp-approval-requests/${id}/decision`, { status: 'approved' });
    const holds = Array.from({ length: 4 }, () => callTool(gateway.baseUrl, c.key, 'shared.hold'));
    await eventually("C's share and queue are taken", () => client().shareUsage(c.keyId).waiting === 2);
    expect((await echo()).error.code).toBe(-32029);
    upstream.release();
    await eventually('the queued calls of C reach the upstream', () => upstream.held().now === 2);
    upstream.release();
    await Promise.all(holds);
    expect((await echo()).result.content[0].text).toBe('approved once');
  });
});

describe('the default connection share', () => {
  let backend: Backend;
  let setup: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    backend = (await availableBackends())[0]![1]();
    setup = await setUp(backend);
  });
  afterAll(async () => {
    setup?.upstream.release();
    await setup?.gateway.close();
    await setup?.upstream.close();
    await backend?.cleanup();
  });

  const load = (yaml: string) =>
    parseConfig(yaml, { path: undefined, env: {}, dataDir: '/nonexistent', source: 'test' });

  it('is 8 of the 32 connections without configuration', () => {
    expect(load('general_settings: {}\n').general_settings.mcp_connections_per_key).toBe(8);
  });

  it.each(['0', '33', '2.5', '"8"', 'null', '-1'])(
    'refuses mcp_connections_per_key: %s at start, naming it',
    (value) => {
      expect(() => load(`general_settings:\n  mcp_connections_per_key: ${value}\n`)).toThrow(
        /general_settings\.mcp_connections_per_key/,
      );
    },
  );

  it("keeps one key that fires 40 calls from taking the pool: another key's call answers at once", async () => {
    const { upstream, tenants, client, hold, echo } = setup;
    const [a, b] = tenants;
    let refused = 0;
    const calls = Array.from({ length: 40 }, () =>
      hold(a).then((answer) => {
        if (answer.error?.code === -32029) refused++;
        return answer;
      }),
    );
    // Every call has arrived: 8 hold A's connections, 8 wait in A's queue, the other 24 were refused.
    await eventually('24 calls of A are refused', () => refused === 24);
    expect(upstream.held().now).toBe(8);
    expect(client().shareUsage(a.keyId)).toEqual({ active: 8, waiting: 8 });
    expect((await echo(b)).result.content[0].text).toBe('hi');
    upstream.release();
    await eventually(
      'the queued calls of A reach the upstream',
      () => upstream.calls('hold').length === 16 && upstream.held().now === 8,
    );
    upstream.release();
    const answers = await Promise.all(calls);
    expect(answers.filter((answer) => answer.result).length).toBe(16);
    expect(answers.filter((answer) => answer.error?.code === -32029).length).toBe(24);
    expect(upstream.held().most).toBe(8);
  });
});
