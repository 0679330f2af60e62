/**
 * Switchboard in front of the reference MCP server `@modelcontextprotocol/server-everything`, started
 * in its Streamable HTTP mode (stateful, SSE answers, resumable event store), together with one of our
 * own upstreams: the SDK client on /mcp sees and calls the tools of both under their namespaces.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { bind, connectClient, createKey, registerServer } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { freePort } from '../support/tcp-ports.ts';

const everythingCli = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json'),
  '..',
  'dist/index.js',
);

describe('Switchboard in front of server-everything', () => {
  let backend: Backend;
  let gateway: TestGateway;
  let everything: ChildProcess;
  let ours: FakeMcpServer;
  let client: Client;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    everything = await startEverything(port);
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend });
    ours = await startFakeMcpServer({ mode: 'stateless' });
    const url = `http://127.0.0.1:${port}/mcp`;
    const reference = await registerServer(gateway, { server_key: 'everything', base_url: url });
    expect(reference.capabilities_refresh.ok).toBe(true);
    const own = await registerServer(gateway, { server_key: 'ours', base_url: ours.url });
    const key = await createKey(gateway);
    await bind(gateway, {
      server_id: reference.server_id,
      scope_type: 'api_key',
      scope_id: key.keyId,
      tool_allowlist: ['echo', 'get-sum'],
    });
    await bind(gateway, {
      server_id: own.server_id,
      scope_type: 'api_key',
      scope_id: key.keyId,
      tool_allowlist: ['echo'],
    });
    client = await connectClient(gateway.baseUrl, key.key);
  });
  afterAll(async () => {
    await client?.close();
    everything?.kill('SIGKILL');
    await gateway?.close();
    await ours?.close();
    await backend?.cleanup();
  });

  it('lists exactly the allowed tools of both servers', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'everything.echo',
      'everything.get-sum',
      'ours.echo',
    ]);
    const sum = tools.find((tool) => tool.name === 'everything.get-sum')!;
    expect(sum.description).toBeTruthy();
    expect(sum.inputSchema.required).toEqual(['a', 'b']);
  });

  it('calls the reference server through its stateful SSE session, and our server beside it', async () => {
    expect(await client.callTool({ name: 'everything.echo', arguments: { message: 'hello' } })).toMatchObject(
      {
        content: [{ type: 'text', text: 'Echo: hello' }],
      },
    );
    const sum = await client.callTool({ name: 'everything.get-sum', arguments: { a: 2, b: 3 } });
    expect(JSON.stringify(sum.content)).toContain('5');
    expect(await client.callTool({ name: 'ours.echo', arguments: { text: 'mine' } })).toEqual({
      content: [{ type: 'text', text: 'mine' }],
    });
  });

  it('starts a new session when the reference server was restarted and forgot the old one', async () => {
    everything.kill('SIGKILL');
    everything = await startEverything(port);
    expect(await client.callTool({ name: 'everything.echo', arguments: { message: 'again' } })).toMatchObject(
      {
        content: [{ type: 'text', text: 'Echo: again' }],
      },
    );
  });

  it('rejects arguments that do not match the reference server’s schema with -32602', async () => {
    await expect(
      client.callTool({ name: 'everything.get-sum', arguments: { a: 'two', b: 3 } }),
    ).rejects.toMatchObject({
      code: -32602,
    });
  });
});

async function startEverything(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [everythingCli, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'ignore',
  });
  await waitForListening(port);
  return child;
}

async function waitForListening(port: number): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt++) {
    try {
      await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'DELETE' });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error('server-everything did not start within 15 s');
}
