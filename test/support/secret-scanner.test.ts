/**
 * The secret scanner of every test gateway (issue 18, security regression) catches what it must: a
 * throwaway gateway with a test-only route that echoes a chosen text leaks each kind of secret on
 * purpose, and close() must fail naming the kind without printing the secret.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SettingsRepository } from '../../src/store/db/repositories/settings-repository.ts';
import { type Backend, sqliteBackend } from './backends.ts';
import { startTestGateway, type TestGateway } from './start-gateway.ts';

const providerKey = 'sk-provider-secret-0123456789';
const yaml = `
model_list:
  - model_name: demo
    params: { provider: fake, model: demo, api_key: ${providerKey} }
    model_info: { id: demo-fake }
`;

let backend: Backend;
let echoed = { body: '', header: '', pieces: [] as string[] };

async function start(): Promise<TestGateway> {
  backend = sqliteBackend();
  echoed = { body: '', header: '', pieces: [] };
  return startTestGateway({
    backend,
    yaml,
    beforeListen(gateway) {
      gateway.app.get('/test-only/echo', { schema: { hide: true } }, async (_request, reply) => {
        if (echoed.header) reply.header('x-echo', echoed.header);
        return reply.type('text/plain').send(echoed.body || 'nothing');
      });
      gateway.app.get('/test-only/stream', { schema: { hide: true } }, async (_request, reply) => {
        reply.hijack();
        reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of echoed.pieces) reply.raw.write(Buffer.from(piece));
        reply.raw.end();
      });
    },
  });
}

async function expectCloseToFail(gateway: TestGateway, kind: string, secret: string): Promise<void> {
  const failure = await gateway.close().then(
    () => undefined,
    (error: Error) => error,
  );
  expect(failure?.message).toContain(kind);
  expect(failure?.message).not.toContain(secret);
}

afterEach(async () => {
  await backend.cleanup();
});

describe('secret scanner of test gateways (issue 18: no secret in any answer, log line or metric)', () => {
  it('passes a gateway that leaked nothing, the key-creation answer included', async () => {
    const gateway = await start();
    const key = await gateway.createKey({ key_name: 'scanned' });
    expect((await fetch(`${gateway.baseUrl}/test-only/echo`)).status).toBe(200);
    expect(gateway.scanner.seen()).toEqual([]);
    expect(key.startsWith('sk-')).toBe(true);
    await gateway.close();
  });

  it('fails on the master key in an answer body', async () => {
    const gateway = await start();
    echoed.body = `here: ${gateway.masterKey}`;
    await fetch(`${gateway.baseUrl}/test-only/echo`);
    await expectCloseToFail(gateway, 'master key', gateway.masterKey);
  });

  it('fails on a provider key of the configuration in a header', async () => {
    const gateway = await start();
    echoed.header = providerKey;
    await fetch(`${gateway.baseUrl}/test-only/echo`);
    await expectCloseToFail(gateway, 'configuration api_key', providerKey);
  });

  it('fails on a minted key anywhere but its creation answer', async () => {
    const gateway = await start();
    const key = await gateway.createKey({ key_name: 'minted' });
    echoed.body = key;
    await fetch(`${gateway.baseUrl}/test-only/echo`);
    await expectCloseToFail(gateway, 'minted API key', key);
  });

  it('fails on a secret split across two chunks of a stream', async () => {
    const gateway = await start();
    const key = gateway.masterKey;
    echoed.pieces = [`data: ${key.slice(0, 5)}`, `${key.slice(5)}\n\n`];
    await (await fetch(`${gateway.baseUrl}/test-only/stream`)).text();
    await expectCloseToFail(gateway, 'master key', key);
  });

  it('fails on an MCP server token (registered from the admin body) in an answer', async () => {
    const gateway = await start();
    const token = 'mcp-bearer-token-abcdef123456';
    const created = await gateway.admin('POST', '/ui/api/mcp-servers', {
      server_key: 'scanned',
      base_url: 'http://127.0.0.1:9/mcp',
      auth_mode: 'bearer',
      auth_config: { token },
    });
    expect(created.status).toBeLessThan(300);
    echoed.body = `token=${token}`;
    await fetch(`${gateway.baseUrl}/test-only/echo`);
    await expectCloseToFail(gateway, 'MCP server token', token);
  });

  it('fails on the hashing salt in a log line', async () => {
    const gateway = await start();
    const salt = await saltOf(gateway);
    gateway.gateway.app.log.warn({ note: salt }, 'a careless line');
    await expectCloseToFail(gateway, 'hashing salt', salt);
  });
});

async function saltOf(gateway: TestGateway): Promise<string> {
  const salt = await new SettingsRepository(gateway.gateway.database.db).get('key_salt');
  if (!salt) throw new Error('the gateway stored no salt');
  return salt;
}
