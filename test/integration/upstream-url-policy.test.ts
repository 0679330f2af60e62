/**
 * Upstream URLs are a request-forgery surface (issue 9): MCP base_url and provider api_base refuse
 * link-local and metadata addresses and credentials inside the URL; query strings are write-only; a
 * disabled server is never contacted; admins other than the master key get one uniform failure message;
 * general_settings.upstream_allowed_hosts narrows where the gateway may connect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { adminOk, createKey } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { freePort } from '../support/tcp-ports.ts';

describe.each(await availableBackends())('the upstream URL policy on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let upstream: FakeMcpServer;
  let adminKey: string;

  beforeAll(async () => {
    backend = makeBackend();
    upstream = await startFakeMcpServer({ mode: 'stateless' });
    gateway = await startTestGateway({ backend });
    await adminOk(gateway, 'POST', '/ui/api/users', { user_id: 'url-admin', role: 'admin' });
    adminKey = (await createKey(gateway, { user_id: 'url-admin' })).key;
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  const asAdminUser = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminKey}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it.each([
    ['http://169.254.169.254/latest/meta-data', /link-local or cloud-metadata/],
    ['http://metadata.google.internal/mcp', /link-local or cloud-metadata/],
    ['http://[fe80::1]:8080/mcp', /link-local or cloud-metadata/],
    ['http://user:secret@127.0.0.1:9/mcp', /auth_config/],
  ])('refuses base_url %s with 400 naming the field, storing nothing', async (url, message) => {
    const before = (await adminOk(gateway, 'GET', '/ui/api/mcp-servers')).total;
    const response = await gateway.admin('POST', '/ui/api/mcp-servers', {
      server_key: `bad-${before}`,
      base_url: url,
    });
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe('base_url');
    expect(response.body.error.message).toMatch(message);
    expect(JSON.stringify(response.body)).not.toContain('secret');
    expect((await adminOk(gateway, 'GET', '/ui/api/mcp-servers')).total).toBe(before);
  });

  it('keeps a query string write-only: used upstream, shown redacted', async () => {
    const created = await gateway.admin('POST', '/ui/api/mcp-servers', {
      server_key: 'query-token',
      base_url: `${upstream.url}?token=very-secret`,
    });
    expect(created.status).toBe(201);
    expect(created.body.capabilities_refresh.ok).toBe(true); // the real URL reached the upstream
    expect(created.body.base_url).toBe(`${upstream.url}?token=REDACTED`);
    const listed = await adminOk(gateway, 'GET', '/ui/api/mcp-servers?limit=500');
    expect(JSON.stringify(listed)).not.toContain('very-secret');
    const detail = await adminOk(gateway, 'GET', `/ui/api/mcp-servers/${created.body.server_id}`);
    expect(JSON.stringify(detail)).not.toContain('very-secret');
  });

  it('never connects to a disabled server: not on create, refresh or health-check', async () => {
    const seen = upstream.requests.length;
    const created = await gateway.admin('POST', '/ui/api/mcp-servers', {
      server_key: 'sleeping',
      base_url: upstream.url,
      enabled: false,
    });
    expect(created.status).toBe(201);
    expect(created.body.capabilities_refresh).toMatchObject({ ok: false, error: /disabled/ });
    const id = created.body.server_id;
    const refreshed = await adminOk(gateway, 'POST', `/ui/api/mcp-servers/${id}/refresh-capabilities`);
    expect(refreshed.error).toMatch(/disabled/);
    const health = await adminOk(gateway, 'POST', `/ui/api/mcp-servers/${id}/health-check`);
    expect(health).toMatchObject({ ok: false, error: expect.stringMatching(/disabled/) });
    expect(upstream.requests.length).toBe(seen);
    // Enabling it fetches its tools.
    const enabled = await adminOk(gateway, 'PATCH', `/ui/api/mcp-servers/${id}`, { enabled: true });
    expect(enabled.tool_count).toBeGreaterThan(0);
  });

  it('tells the master key why an upstream failed, and other admins only one uniform message', async () => {
    const closedPort = await freePort();
    const httpOnly = await FakeOpenAiServer.start(); // answers HTTP, but not as an MCP server
    try {
      const reports: string[] = [];
      for (const [index, url] of [`http://127.0.0.1:${closedPort}/mcp`, `${httpOnly.origin}/mcp`].entries()) {
        const created = await asAdminUser('POST', '/ui/api/mcp-servers', {
          server_key: `scan-${index}`,
          base_url: url,
        });
        expect(created.status).toBe(201);
        reports.push(created.body.capabilities_refresh.error, created.body.last_refresh_error);
        const id = created.body.server_id;
        const health = await asAdminUser('POST', `/ui/api/mcp-servers/${id}/health-check`);
        reports.push(health.body.error);
        const master = await adminOk(gateway, 'POST', `/ui/api/mcp-servers/${id}/health-check`);
        expect(master.error).not.toBe(health.body.error); // the master key sees the cause
      }
      expect(new Set(reports).size).toBe(1);
      expect(reports[0]).toMatch(/could not be reached or did not answer as an MCP server/);
    } finally {
      await httpOnly.close();
    }
  });
});

describe('provider api_base and upstream_allowed_hosts in the configuration', () => {
  const load = (yaml: string) =>
    parseConfig(yaml, { path: undefined, env: {}, dataDir: '/nonexistent', source: 'test' });
  const problems = (yaml: string): readonly string[] => {
    try {
      load(yaml);
    } catch (error) {
      if (error instanceof ConfigError) return error.issues;
      throw error;
    }
    return [];
  };

  it('refuses a metadata api_base and credentials inside api_base, naming the field', () => {
    const issues = problems(`
model_list:
  - { model_name: a, params: { provider: openai, model: m, api_base: "http://169.254.169.254/v1" } }
  - { model_name: b, params: { provider: openai, model: m, api_base: "http://me:pw@10.0.0.1/v1" } }
`);
    expect(issues.join('\n')).toMatch(/model_list\[0\]\.params\.api_base: .*link-local or cloud-metadata/);
    expect(issues.join('\n')).toMatch(/model_list\[1\]\.params\.api_base: .*credentials/);
  });

  it('accepts only the listed hosts when upstream_allowed_hosts is set', () => {
    const issues = problems(`
model_list:
  - { model_name: a, params: { provider: openai, model: m, api_base: "https://api.openai.com/v1" } }
  - { model_name: b, params: { provider: openai, model: m, api_base: "http://10.0.0.1/v1" } }
mcp_servers:
  - { server_key: tools, base_url: "http://tools.corp.example/mcp" }
general_settings:
  upstream_allowed_hosts: [api.openai.com, "*.corp.example"]
`);
    expect(issues).toEqual([
      "model_list[1].params.api_base: '10.0.0.1' is not in general_settings.upstream_allowed_hosts",
    ]);
  });

  it('still connects to a provider named by a DNS name (the connect-time lookup guard lets loopback through)', async () => {
    const upstream = await FakeOpenAiServer.start();
    const backend = (await availableBackends())[0]![1]();
    const gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - { model_name: named, params: { provider: openai, model: m, api_base: "${upstream.baseUrl.replace('127.0.0.1', 'localhost')}" } }
`,
    });
    try {
      const key = await gateway.createKey();
      const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'named', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(200);
      expect(upstream.requests).toHaveLength(1);
    } finally {
      await gateway.close();
      await upstream.close();
      await backend.cleanup();
    }
  });
});
