/**
 * The MCP gateway across processes and through Redis outages (issue 5), on PostgreSQL and Redis: an
 * admin change on one replica reaches the in-process catalogue of another; when Redis dies, tool limits
 * degrade as `redis_degraded_mode` says (fail_open: per-process counters; fail_closed: -32603).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { type Backend, postgresBackend } from '../support/backends.ts';
import { bind, callTool, createKey, registerServer, rpc, setPolicy } from '../support/mcp-fixtures.ts';
import { PrivateRedis } from '../support/private-redis.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

describe.runIf(await realBackendsAvailable())('the MCP gateway on several replicas and without Redis', () => {
  let redis: PrivateRedis;
  let backend: Backend;
  let open: TestGateway;
  let closed: TestGateway;
  let upstream: FakeMcpServer;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    upstream = await startFakeMcpServer({ mode: 'stateless' });
    const base = postgresBackend();
    backend = {
      ...base,
      redisUrl: redis.url,
      generalSettingsYaml: `  database_url: ${JSON.stringify(base.databaseUrl)}\n  redis_url: ${JSON.stringify(redis.url)}\n`,
    };
    // Two replicas of one deployment: same database schema, same Redis and key prefix.
    open = await startTestGateway({ backend, generalSettings: '  redis_degraded_mode: fail_open\n' });
    closed = await startTestGateway({ backend, generalSettings: '  redis_degraded_mode: fail_closed\n' });
  });
  afterAll(async () => {
    await open?.close();
    await closed?.close();
    await redis?.kill();
    await upstream?.close();
    await backend?.cleanup();
  });

  it('shows a server registered and bound on one replica in tools/list of the other', async () => {
    const server = await registerServer(open, { server_key: 'shared', base_url: upstream.url });
    const key = await createKey(open);
    await bind(open, {
      server_id: server.server_id,
      scope_type: 'api_key',
      scope_id: key.keyId,
      tool_allowlist: ['echo'],
    });
    await setPolicy(open, { server_id: server.server_id, tool_name: 'echo', max_rpm: 2 });
    const names = async () =>
      (
        await rpc(closed.baseUrl, key.key, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
      ).body.result.tools.map((tool: { name: string }) => tool.name);
    await waitFor(async () => (await names()).includes('shared.echo'));
    expect(await names()).toEqual(['shared.echo']);
  });

  it('counts max_rpm across replicas in Redis', async () => {
    const key = await keyFor(open);
    expect((await callTool(open.baseUrl, key, 'shared.echo', { text: '1' })).result).toBeDefined();
    expect((await callTool(closed.baseUrl, key, 'shared.echo', { text: '2' })).result).toBeDefined();
    expect((await callTool(open.baseUrl, key, 'shared.echo', { text: '3' })).error.code).toBe(-32029);
  });

  it('closes a deleted server’s client on every replica, ending each replica’s upstream session (issue 9)', async () => {
    const stateful = await startFakeMcpServer({ mode: 'stateful' });
    try {
      const server = await registerServer(open, { server_key: 'doomed', base_url: stateful.url });
      const key = await createKey(open);
      await bind(open, { server_id: server.server_id, scope_type: 'api_key', scope_id: key.keyId });
      await waitFor(
        async () =>
          (await callTool(closed.baseUrl, key.key, 'doomed.echo', { text: 'x' })).result !== undefined,
      );
      expect((await callTool(open.baseUrl, key.key, 'doomed.echo', { text: 'y' })).result).toBeDefined();
      const sessions = new Set(
        stateful.requests.map((request) => request.headers['mcp-session-id']).filter(Boolean),
      );
      expect(sessions.size).toBeGreaterThanOrEqual(2); // one upstream session per replica
      expect((await open.admin('DELETE', `/ui/api/mcp-servers/${server.server_id}`)).status).toBe(200);
      const ended = () =>
        new Set(
          stateful.requests
            .filter((request) => request.method === 'DELETE')
            .map((request) => request.headers['mcp-session-id']),
        );
      await waitFor(async () => ended().size >= 2);
      expect(ended()).toEqual(sessions);
    } finally {
      await stateful.close();
    }
  });

  it('keeps limiting per process under fail_open and answers -32603 under fail_closed when Redis is gone', async () => {
    const key = await keyFor(open);
    await redis.kill();
    const other = await keyFor(open, [open]); // without Redis, only this replica learns of the binding at once
    // max_rpm counts per wall-clock minute: three calls straddling a minute's end would start a fresh
    // count (CI saw the third call served), so they start early in a minute.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 40_000) await new Promise((resolve) => setTimeout(resolve, 60_100 - intoMinute));
    expect((await callTool(open.baseUrl, other, 'shared.echo', { text: 'a' })).result).toBeDefined();
    expect((await callTool(open.baseUrl, other, 'shared.echo', { text: 'b' })).result).toBeDefined();
    expect((await callTool(open.baseUrl, other, 'shared.echo', { text: 'c' })).error.code).toBe(-32029);
    const refused = await callTool(closed.baseUrl, key, 'shared.echo', { text: 'x' });
    expect(refused.error.code).toBe(-32603);
    expect(refused.error.message).toContain('shared store');
  });

  /** A new key bound to the shared server (bindings per key keep the tests apart). */
  async function keyFor(gateway: TestGateway, replicas: TestGateway[] = [open, closed]): Promise<string> {
    const servers = (await gateway.admin('GET', '/ui/api/mcp-servers')).body.data;
    const key = await createKey(gateway);
    await bind(gateway, { server_id: servers[0].server_id, scope_type: 'api_key', scope_id: key.keyId });
    for (const replica of replicas) {
      await waitFor(
        async () =>
          (await callTool(replica.baseUrl, key.key, 'shared.add', { a: 1, b: 1 })).result !== undefined,
      );
    }
    return key.key;
  }
});

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  // A guard against an event that never comes, not a speed check.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('condition not met within 10 s');
}
