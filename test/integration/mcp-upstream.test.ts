/**
 * The upstream side of the MCP gateway (issue 5): what upstreams receive (Accept, bearer token,
 * allowlisted headers only, the session id), session reuse and re-initialization on 404, and how
 * upstream failures become JSON-RPC errors without leaking upstream text.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeMcpServer, startRawUpstream } from '../fakes/mcp/fake-mcp-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { adminOk, bind, callTool, createKey, registerServer } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { freePort } from '../support/tcp-ports.ts';

type Scenario = (response: ServerResponse, body: any) => void;

/** A hand-written upstream: a valid handshake and tools/list, then `onCall` answers tools/call. */
function scripted(onCall: Scenario): Scenario {
  return (response, body) => {
    const json = (value: unknown) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (body?.method === 'initialize') {
      return json({
        jsonrpc: '2.0',
        id: body.id,
        result: {
          protocolVersion: '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'raw', version: '1' },
        },
      });
    }
    if (body?.id === undefined) return response.writeHead(202).end();
    if (body.method === 'tools/list') {
      return json({
        jsonrpc: '2.0',
        id: body.id,
        result: { tools: [{ name: 'go', description: 'Go.', inputSchema: { type: 'object' } }] },
      });
    }
    onCall(response, body);
  };
}

describe('MCP upstream client', () => {
  let backend: Backend;
  let gateway: TestGateway;
  let key: { key: string; keyId: string };
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend });
    key = await createKey(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    for (const close of closers) await close();
    await backend?.cleanup();
  });

  async function serve(serverKey: string, body: Record<string, unknown>) {
    const server = await registerServer(gateway, { server_key: serverKey, ...body });
    await bind(gateway, { server_id: server.server_id, scope_type: 'api_key', scope_id: key.keyId });
    return server;
  }

  async function rawServer(serverKey: string, onCall: Scenario, extra: Record<string, unknown> = {}) {
    const upstream = await startRawUpstream(scripted(onCall));
    closers.push(upstream.close);
    return serve(serverKey, { base_url: upstream.url, ...extra });
  }

  it('sends the bearer token and only allowlisted caller headers, never the caller key', async () => {
    const upstream = await startFakeMcpServer({ mode: 'stateless', token: 'upstream-secret' });
    closers.push(upstream.close);
    await serve('authed', {
      base_url: upstream.url,
      auth_mode: 'bearer',
      auth_config: { token: 'upstream-secret' },
      forwarded_headers_allowlist: ['X-Tenant', 'x-trace'],
    });
    const answer = await callTool(
      gateway.baseUrl,
      key.key,
      'authed.echo',
      { text: 'a' },
      {
        'x-tenant': 'acme',
        'x-secret': 'do-not-forward',
      },
    );
    expect(answer.result.content[0].text).toBe('a');
    const seen = upstream.calls('echo')[0]!.headers;
    expect(seen.authorization).toBe('Bearer upstream-secret');
    expect(seen['x-tenant']).toBe('acme');
    expect(seen['x-secret']).toBeUndefined();
    expect(seen['x-trace']).toBeUndefined();
    expect(seen.accept).toBe('application/json, text/event-stream');
    expect(seen['mcp-protocol-version']).toBe('2025-06-18');
  });

  it('answers -32001 when the upstream rejects the credentials, without relaying its text', async () => {
    const upstream = await startFakeMcpServer({ mode: 'stateless', token: 'right' });
    closers.push(upstream.close);
    const server = await serve('badauth', { base_url: upstream.url, auth_config: { token: 'right' } });
    expect(server.auth_mode).toBe('bearer');
    await adminOk(gateway, 'PATCH', `/ui/api/mcp-servers/${server.server_id}`, {
      auth_config: { token: 'wrong' },
    });
    const answer = await callTool(gateway.baseUrl, key.key, 'badauth.echo', { text: 'a' });
    expect(answer.error.code).toBe(-32001);
    expect(JSON.stringify(answer)).not.toContain('secret detail');
  });

  it('initializes once per upstream session, reuses the session id, and re-initializes after a 404', async () => {
    const upstream = await startFakeMcpServer({ mode: 'stateful' });
    closers.push(upstream.close);
    await serve('sessions', { base_url: upstream.url });
    for (const text of ['1', '2', '3']) {
      expect(
        (await callTool(gateway.baseUrl, key.key, 'sessions.echo', { text })).result.content[0].text,
      ).toBe(text);
    }
    const initializes = () => upstream.requests.filter((entry) => entry.body?.method === 'initialize').length;
    expect(initializes()).toBe(1);
    const sessionIds = new Set(upstream.calls('echo').map((entry) => entry.headers['mcp-session-id']));
    expect(sessionIds.size).toBe(1);
    expect([...sessionIds][0]).toMatch(/^[0-9a-f-]{36}$/);

    upstream.expireSessions();
    expect(
      (await callTool(gateway.baseUrl, key.key, 'sessions.echo', { text: 'after' })).result.content[0].text,
    ).toBe('after');
    expect(initializes()).toBe(2);
    const last = upstream.calls('echo').at(-1)!;
    expect(last.headers['mcp-session-id']).not.toBe([...sessionIds][0]);
  });

  it.each<[string, Scenario]>([
    [
      'HTTP 500 with a body',
      (response) =>
        response.writeHead(500, { 'content-type': 'text/plain' }).end('stack trace: secret detail'),
    ],
    [
      'a body that is not JSON',
      (response) =>
        response.writeHead(200, { 'content-type': 'application/json' }).end('secret detail <html>'),
    ],
    [
      'an unexpected content type',
      (response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<p>secret detail</p>'),
    ],
    [
      'a content type carrying upstream text',
      (response) =>
        response.writeHead(200, { 'content-type': 'text/secret detail' }).end('<p>secret detail</p>'),
    ],
    [
      'a response without result or error',
      (response, body) =>
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: body.id })),
    ],
    [
      'a result that is not a tool result',
      (response, body) =>
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { content: 'secret detail' } })),
    ],
    [
      'a JSON-RPC error',
      (response, body) =>
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            error: { code: -32000, message: 'secret detail' },
          }),
        ),
    ],
    [
      'an oversize answer',
      (response, body) =>
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: { content: [{ type: 'text', text: 'x'.repeat(9 * 1024 * 1024) }] },
          }),
        ),
    ],
    ['a dropped connection', (response) => response.socket?.destroy()],
  ])('answers -32005 for %s, with sanitized text', async (name, onCall) => {
    await rawServer(`raw-${name.replaceAll(/[^a-z]/g, '')}`.slice(0, 60), onCall);
    const answer = await callTool(
      gateway.baseUrl,
      key.key,
      `raw-${name.replaceAll(/[^a-z]/g, '')}`.slice(0, 60) + '.go',
    );
    expect(answer.error.code).toBe(-32005);
    expect(JSON.stringify(answer)).not.toContain('secret detail');
    expect(JSON.stringify(answer)).not.toContain('127.0.0.1');
  });

  it('answers -32005 when the upstream cannot be reached, and keeps the stored catalogue', async () => {
    const upstream = await startFakeMcpServer({ mode: 'stateless' });
    const server = await serve('gone', { base_url: upstream.url });
    await upstream.close();
    const answer = await callTool(gateway.baseUrl, key.key, 'gone.echo', { text: 'x' });
    expect(answer.error.code).toBe(-32005);
    const refresh = await adminOk(
      gateway,
      'POST',
      `/ui/api/mcp-servers/${server.server_id}/refresh-capabilities`,
    );
    expect(refresh.ok).toBe(false);
    expect(refresh.server.tool_count).toBe(fakeToolCount);
    expect(refresh.server.last_refresh_error).toContain("'gone'");
    await adminOk(gateway, 'PATCH', `/ui/api/mcp-servers/${server.server_id}`, {
      base_url: `http://127.0.0.1:${await freePort()}/mcp`,
    });
    expect((await callTool(gateway.baseUrl, key.key, 'gone.echo', { text: 'x' })).error.code).toBe(-32005);
  });

  it('answers -32005 when the upstream keeps refusing its own new session after re-initializing', async () => {
    let initializes = 0;
    const upstream = await startRawUpstream((response, body) => {
      if (body?.method === 'initialize') {
        initializes++;
        return response
          .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `s-${initializes}` })
          .end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: body.id,
              result: {
                protocolVersion: '2025-06-18',
                capabilities: { tools: {} },
                serverInfo: { name: 'forgetful', version: '1' },
              },
            }),
          );
      }
      if (body?.id === undefined) return response.writeHead(202).end();
      if (body.method === 'tools/list' && initializes === 1) {
        return response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: { tools: [{ name: 'go', description: 'Go.', inputSchema: { type: 'object' } }] },
          }),
        );
      }
      response.writeHead(404, { 'content-type': 'text/plain' }).end('secret detail: no such session');
    });
    closers.push(upstream.close);
    await serve('forgetful', { base_url: upstream.url });
    const before = initializes;
    const answer = await callTool(gateway.baseUrl, key.key, 'forgetful.go');
    expect(answer.error.code).toBe(-32005);
    expect(answer.error.data.upstream_status).toBe(404);
    expect(JSON.stringify(answer)).not.toContain('secret detail');
    expect(initializes - before).toBe(1); // one new handshake, one retry, no loop
  });

  it('answers -32030 when the upstream does not answer within request_timeout_ms', async () => {
    await rawServer('hangs', () => {}, { request_timeout_ms: 300 });
    const answer = await callTool(gateway.baseUrl, key.key, 'hangs.go');
    expect(answer.error.code).toBe(-32030);
    // The server's request_timeout_ms ended it (the answer names it), not a longer default timeout.
    expect(answer.error.data.timeout_ms).toBe(300);
  });
});

const fakeToolCount = 5;
