/**
 * Failing credentials are throttled, valid ones never (issues 9 and 25): after 20 unknown keys in a
 * minute from one client address, further unknown keys get 429 with retry-after until the minute ends,
 * on /ui/api, /v1 and /mcp alike (the master key authenticates on all three), while a valid key from
 * the same address is served. The address is the peer's, or the client's from X-Forwarded-For when
 * the peer is in general_settings.trusted_proxies; the setting is validated and named when wrong.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const mcpInitialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

/** One authenticated call on a surface, with `bearer` and optional extra headers. */
function surfaces(baseUrl: string) {
  const call = (path: string, bearer: string, init: RequestInit = {}, headers: Record<string, string> = {}) =>
    fetch(baseUrl + path, { ...init, headers: { authorization: `Bearer ${bearer}`, ...headers } });
  return {
    admin: (bearer: string, headers: Record<string, string> = {}) =>
      call('/ui/api/keys', bearer, {}, headers),
    models: (bearer: string, headers: Record<string, string> = {}) => call('/v1/models', bearer, {}, headers),
    mcp: (bearer: string) =>
      call(
        '/mcp',
        bearer,
        { method: 'POST', body: JSON.stringify(mcpInitialize) },
        { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      ),
  };
}

describe('the failed-authentication throttle', () => {
  let backend: Backend;
  let gateway: TestGateway;
  let on: ReturnType<typeof surfaces>;
  const clock = new ManualClock(Date.parse('2026-11-24T12:00:05Z'));

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend, clock });
    on = surfaces(gateway.baseUrl);
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('answers 429 to unknown keys after 20 failures a minute, and 401 again the next minute', async () => {
    clock.set(Date.parse('2026-11-24T12:00:05Z'));
    for (let attempt = 0; attempt < 20; attempt++)
      expect((await on.admin(`sk-guess-${attempt}`)).status).toBe(401);
    const throttled = await on.admin('sk-guess-21');
    expect(throttled.status).toBe(429);
    expect(((await throttled.json()) as any).error.code).toBe('too_many_failed_authentications');
    expect(throttled.headers.get('retry-after')).toBe('55');
    clock.set(Date.parse('2026-11-24T12:01:00Z'));
    expect((await on.admin('sk-guess-22')).status).toBe(401);
  });

  it('serves the valid master key after 50 failures from the same address, while guesses stay throttled', async () => {
    clock.set(Date.parse('2026-11-24T12:02:00Z'));
    for (let attempt = 0; attempt < 50; attempt++) await on.admin(`sk-guess-${attempt}`);
    expect((await on.admin(gateway.masterKey)).status).toBe(200);
    expect((await on.models(gateway.masterKey)).status).toBe(200);
    const key = await gateway.createKey();
    expect((await on.models(key)).status).toBe(200);
    expect((await on.admin('sk-guess-after')).status).toBe(429);
  });

  it('throttles master-key guesses on /v1 and /mcp too, counting every surface together', async () => {
    clock.set(Date.parse('2026-11-24T12:03:00Z'));
    for (let attempt = 0; attempt < 10; attempt++)
      expect((await on.models(`sk-v1-${attempt}`)).status).toBe(401);
    for (let attempt = 0; attempt < 10; attempt++)
      expect((await on.mcp(`sk-mcp-${attempt}`)).status).toBe(401);
    const v1 = await on.models('sk-v1-more');
    expect(v1.status).toBe(429);
    expect(v1.headers.get('retry-after')).toBe('60');
    const mcp = await on.mcp('sk-mcp-more');
    expect(mcp.status).toBe(429);
    expect(mcp.headers.get('retry-after')).toBe('60');
    expect((await on.admin('sk-admin-more')).status).toBe(429);
    expect((await on.mcp(gateway.masterKey)).status).toBe(200);
  });

  it('leaves callers without a key, and with a known but blocked key, to their own 401', async () => {
    clock.set(Date.parse('2026-11-24T12:04:00Z'));
    for (let attempt = 0; attempt < 25; attempt++) {
      const response = await fetch(`${gateway.baseUrl}/v1/models`);
      expect(response.status).toBe(401);
    }
    const created = await gateway.admin('POST', '/ui/api/keys', {});
    await gateway.admin('PUT', `/ui/api/keys/${created.body.key_id}`, { blocked: true });
    for (let attempt = 0; attempt < 25; attempt++) {
      const response = await on.models(created.body.key);
      expect(((await response.json()) as any).error.code).toBe('blocked_api_key');
    }
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy: a spoofed address is no escape', async () => {
    clock.set(Date.parse('2026-11-24T12:05:00Z'));
    for (let attempt = 0; attempt < 20; attempt++)
      await on.models(`sk-spoof-${attempt}`, { 'x-forwarded-for': `203.0.113.${attempt}` });
    expect((await on.models('sk-spoof-more', { 'x-forwarded-for': '198.51.100.7' })).status).toBe(429);
  });
});

describe('general_settings.trusted_proxies', () => {
  let backend: Backend;
  let gateway: TestGateway;
  let on: ReturnType<typeof surfaces>;
  const clock = new ManualClock(Date.parse('2026-11-24T12:00:05Z'));

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      clock,
      generalSettings: '  trusted_proxies: [127.0.0.1/32, "::1"]\n',
    });
    on = surfaces(gateway.baseUrl);
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('takes the client address from X-Forwarded-For when the peer is trusted: one client is throttled, not all', async () => {
    const from = (address: string) => ({ 'x-forwarded-for': address });
    for (let attempt = 0; attempt < 20; attempt++)
      expect((await on.models(`sk-guess-${attempt}`, from('203.0.113.9'))).status).toBe(401);
    expect((await on.models('sk-guess-more', from('203.0.113.9'))).status).toBe(429);
    // Another client behind the same balancer, and the guesser's own address spoofed further left.
    expect((await on.models('sk-other-client', from('198.51.100.7'))).status).toBe(401);
    expect((await on.models('sk-guess-spoof', from('198.51.100.8, 203.0.113.9'))).status).toBe(429);
  });

  it('is validated: a bad entry is a configuration error and a 400 naming the path', async () => {
    const load = (entries: string) =>
      parseConfig(`general_settings:\n  trusted_proxies: ${entries}\n`, {
        path: undefined,
        env: {},
        dataDir: '/tmp',
        source: 'test',
      });
    for (const bad of [
      '[10.0.0.0/33]',
      '[proxy.internal]',
      '["::1/129"]',
      '["10.0.0.1\\u0000"]',
      '[10.0.0.0/8/8]',
      '["fe80::1%eth0"]',
    ])
      expect(() => load(bad), bad).toThrow(/general_settings\.trusted_proxies\[0\]/);
    expect(() => load('[10.0.0.0/8, "fd00::/8", loopback, 192.168.1.7]')).not.toThrow();
    const patched = await gateway.admin('PATCH', '/ui/api/settings', {
      general_settings: { trusted_proxies: ['10.0.0.0/99'] },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.error.param).toBe('general_settings.trusted_proxies');
    expect(patched.body.error.message).toContain('10.0.0.0/99');
  });
});
