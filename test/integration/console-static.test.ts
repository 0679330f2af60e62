/**
 * The web console at /ui (issue 17): the single-page app's index for every page path, hashed assets
 * cached for a year, a missing asset a 404 rather than the app, security headers on all of it,
 * no-store on every admin API answer and nothing added to /v1 answers (hot path), a checkout without
 * a built console still starting (503 at /ui saying how to build it), general_settings.console_enabled,
 * and GET /ui/api/session. Storage plays no part here, so one backend is enough.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSOLE_DIST,
  CONSOLE_SECURITY_HEADERS,
  NOT_BUILT_MESSAGE,
} from '../../src/http/routes/console-static.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { adminOk, createKey } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

// CI runs `npm ci`, whose prepare step builds the console; a bare checkout builds it here once.
if (!existsSync(join(CONSOLE_DIST, 'index.html')))
  execFileSync('npm', ['run', 'build:ui'], { stdio: 'ignore', cwd: join(CONSOLE_DIST, '../..') });

function expectSecurityHeaders(response: Response): void {
  for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS))
    expect(response.headers.get(name), name).toBe(value);
}

describe('the console served at /ui', () => {
  let backend: Backend;
  let gateway: TestGateway;
  const index = readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8');
  const script = readdirSync(join(CONSOLE_DIST, 'assets')).find((name) => name.endsWith('.js'))!;

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });
  const get = (path: string, init?: RequestInit) =>
    fetch(gateway.baseUrl + path, { redirect: 'manual', ...init });

  it('redirects /ui to /ui/ (the app loads its assets relative to the slash)', async () => {
    const response = await get('/ui');
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/ui/');
    // The console's router writes its index route's state as /ui?window=7d: a reload keeps it.
    const withQuery = await get('/ui?window=7d');
    expect(withQuery.headers.get('location')).toBe('/ui/?window=7d');
  });

  it('answers the index, never cached, for /ui/ and every page path of the app', async () => {
    for (const path of ['/ui/', '/ui/models', '/ui/identities/keys', '/ui/spend/audit?from=x']) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(response.headers.get('cache-control'), path).toBe('no-cache');
      expectSecurityHeaders(response);
      expect(await response.text(), path).toBe(index);
    }
  });

  it('serves hashed assets immutable for a year, with the security headers', async () => {
    const response = await get(`/ui/assets/${script}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/javascript/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expectSecurityHeaders(response);
    expect(await response.text()).toBe(readFileSync(join(CONSOLE_DIST, 'assets', script), 'utf8'));
  });

  it('answers 404 for a missing asset instead of the app', async () => {
    const response = await get('/ui/assets/nope.js');
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain('<html');
  });

  it('never serves a file outside the built assets: traversal, NUL bytes and over-long names are refused', async () => {
    const secretish = readFileSync(join(CONSOLE_DIST, '../../package.json'), 'utf8');
    const hostile = [
      '/ui/assets/..%2f..%2f..%2fpackage.json',
      '/ui/assets/%2e%2e/%2e%2e/%2e%2e/package.json',
      '/ui/assets/..%5c..%5c..%5cpackage.json',
      '/ui/assets/%2e%2e%2f%2e%2e%2findex.html',
      `/ui/assets/${script}%00.txt`,
      `/ui/assets/${'a'.repeat(5_000)}.js`,
    ];
    for (const path of hostile) {
      const response = await get(path);
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      expect(response.status, path).toBeLessThan(500);
      const body = await response.text();
      expect(body, path).not.toContain(secretish.slice(0, 40));
      expect(body, path).not.toContain('<html');
    }
    // A page path with the same tricks is only ever the app's index, never a file from disk.
    const page = await get('/ui/..%2f..%2fpackage.json');
    expect([200, 404]).toContain(page.status);
    expect(await page.text()).not.toContain(secretish.slice(0, 40));
  });

  it('answers HEAD for pages and assets', async () => {
    const page = await get('/ui/models', { method: 'HEAD' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toBe('');
    const asset = await get(`/ui/assets/${script}`, { method: 'HEAD' });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
  });

  it('answers an unknown admin API path with the JSON 404, not the app', async () => {
    const response = await get('/ui/api/no-such-route', {
      headers: { authorization: `Bearer ${gateway.masterKey}` },
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error?: { code: string } }).error?.code).toBeDefined();
  });

  it('marks every admin API answer no-store, errors included', async () => {
    const listed = await get('/ui/api/keys', { headers: { authorization: `Bearer ${gateway.masterKey}` } });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('cache-control')).toBe('no-store');
    const refused = await get('/ui/api/keys');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('cache-control')).toBe('no-store');
  });

  it('adds nothing to /v1 answers: no cache header, no console headers (the hot path pays nothing)', async () => {
    const key = await gateway.createKey();
    const response = await get('/v1/models', { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBeNull();
    expect(response.headers.get('content-security-policy')).toBeNull();
    // The hook is attached per admin route, so a proxy route carries none at all.
    const hooks = (route: string) => {
      const lines = gateway.gateway.app
        .printRoutes({ includeHooks: true, commonPrefix: false, method: 'POST' })
        .split('\n');
      const start = lines.findIndex((line) => line.includes(`${route} (POST)`));
      expect(start, route).toBeGreaterThanOrEqual(0);
      const next = lines.findIndex((line, index) => index > start && /── \//.test(line));
      return lines.slice(start + 1, next).join('\n');
    };
    expect(hooks('/ui/api/keys')).toContain('noStore');
    expect(hooks('/v1/chat/completions')).not.toContain('onSend');
  });
});

describe('GET /ui/api/session', () => {
  let backend: Backend;
  let gateway: TestGateway;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend });
    await adminOk(gateway, 'POST', '/ui/api/organizations', { organization_id: 'org-s' });
    await adminOk(gateway, 'POST', '/ui/api/users', { user_id: 'root', role: 'proxy_admin' });
    await adminOk(gateway, 'POST', '/ui/api/users', {
      user_id: 'boss',
      organization_id: 'org-s',
      role: 'org_admin',
    });
    keys.proxy = (await createKey(gateway, { user_id: 'root' })).key;
    keys.org = (await createKey(gateway, { user_id: 'boss' })).key;
    keys.plain = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });
  const session = async (bearer?: string) => {
    const response = await fetch(`${gateway.baseUrl}/ui/api/session`, {
      headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('names the master key, a proxy administrator and an organization administrator, never a key id', async () => {
    expect(await session(gateway.masterKey)).toEqual({ status: 200, body: { actor: { kind: 'master' } } });
    expect(await session(keys.proxy)).toEqual({
      status: 200,
      body: { actor: { kind: 'user', user_id: 'root', role: 'proxy_admin' } },
    });
    const org = await session(keys.org);
    expect(org).toEqual({
      status: 200,
      body: { actor: { kind: 'user', user_id: 'boss', role: 'org_admin', organization_id: 'org-s' } },
    });
    expect(JSON.stringify(org.body)).not.toMatch(/key/);
  });

  it('refuses no key or an unknown key with 401 and a valid non-admin key with 403', async () => {
    expect((await session()).status).toBe(401);
    expect((await session('sk-not-a-key')).status).toBe(401);
    const plain = await session(keys.plain);
    expect(plain.status).toBe(403);
    expect(plain.body.error.code).toBe('master_key_required');
  });
});

describe('the console when it is not built or not enabled', () => {
  const backends: Backend[] = [];
  const gateways: TestGateway[] = [];
  const empty = mkdtempSync(join(tmpdir(), 'switchboard-no-console-'));
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    for (const backend of backends) await backend.cleanup();
    rmSync(empty, { recursive: true, force: true });
  });
  const start = async (options: {
    consoleDistDir?: string;
    generalSettings?: string;
    logger?: pino.Logger;
  }) => {
    const backend = sqliteBackend();
    backends.push(backend);
    const gateway = await startTestGateway({ backend, ...options });
    gateways.push(gateway);
    return gateway;
  };

  it('starts without a build, warns once, and answers 503 at /ui saying how to build it', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'warn' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const gateway = await start({ consoleDistDir: empty, logger });
    const response = await fetch(`${gateway.baseUrl}/ui/keys`);
    expect(response.status).toBe(503);
    expect(await response.text()).toBe(NOT_BUILT_MESSAGE);
    expect(lines.filter((line) => line.includes('console not built'))).toHaveLength(1);
    const api = await fetch(`${gateway.baseUrl}/ui/api/session`, {
      headers: { authorization: `Bearer ${gateway.masterKey}` },
    });
    expect(api.status).toBe(200);
  });

  it('general_settings.console_enabled: false answers 404 at /ui and keeps the admin API', async () => {
    const gateway = await start({ generalSettings: '  console_enabled: false\n' });
    for (const path of ['/ui/', '/ui/models', `/ui/assets/${readdirSync(join(CONSOLE_DIST, 'assets'))[0]}`])
      expect((await fetch(gateway.baseUrl + path)).status, path).toBe(404);
    const api = await fetch(`${gateway.baseUrl}/ui/api/session`, {
      headers: { authorization: `Bearer ${gateway.masterKey}` },
    });
    expect(api.status).toBe(200);
  });
});
