/**
 * The `switchboard` command as a user runs it (issue 2): --help, a bad config that exits before
 * listening, the embedded default that prints a master key and serves `demo` to the official openai
 * SDK, and SIGTERM that lets an in-flight request finish.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { runCli, type SpawnedGateway, spawnGateway } from '../support/spawn-gateway.ts';
import { freePort } from '../support/tcp-ports.ts';

const folders: string[] = [];
const tempFolder = () => {
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-cli-'));
  folders.push(folder);
  return folder;
};

describe('the switchboard command', () => {
  const running: SpawnedGateway[] = [];
  afterAll(async () => {
    for (const gateway of running) await gateway.stop('SIGKILL');
  });

  it('documents every flag in --help', async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    for (const flag of [
      '--config',
      '--port',
      '--host',
      '--workers',
      '--data-dir',
      'GATEWAY_MASTER_KEY',
      'migrate',
    ]) {
      expect(stdout).toContain(flag);
    }
  });

  it('rejects an unknown flag with a hint and exit code 2', async () => {
    const { code, stderr } = await runCli(['--prot', '1']);
    expect(code).toBe(2);
    expect(stderr).toContain('--help');
  });

  it('takes --batch-worker on or off only (GATEWAY_BATCH_WORKER likewise), with exit code 2 otherwise', async () => {
    const flag = await runCli(['--batch-worker', 'maybe']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--batch-worker must be on or off (got 'maybe')");
    const env = await runCli(['--help'], { GATEWAY_BATCH_WORKER: 'yes' });
    expect(env.code).toBe(0);
    expect(env.stdout).toContain('--batch-worker on|off');
  });

  it('exits non-zero with a precise message on a bad config, without listening', async () => {
    const folder = tempFolder();
    const config = join(folder, 'bad.yaml');
    writeFileSync(
      config,
      'model_list:\n  - model_name: a\n    params: { provider: fake, model: a }\n  - model_name: b\n    params: { provider: openai, model: b, api_base: "not a url" }\nrouter_settings:\n  num_retires: 2\n',
    );
    const port = await freePort();
    const { code, stderr } = await runCli(['serve', '--config', config, '--port', String(port)]);
    expect(code).toBe(1);
    expect(stderr).toContain('model_list[1].params.api_base: must be a URL');
    expect(stderr).toContain("router_settings.num_retires: unknown key (did you mean 'num_retries'?)");
    await expect(fetch(`http://127.0.0.1:${port}/health/liveliness`)).rejects.toThrow();
  });

  it('refuses a master key shorter than 16 characters beyond loopback, and only warns on loopback (issue 9)', async () => {
    const dataDir = tempFolder();
    const port = await freePort();
    const refused = await runCli(
      ['serve', '--data-dir', dataDir, '--host', '0.0.0.0', '--port', String(port)],
      {
        GATEWAY_MASTER_KEY: 'a',
      },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the master key from GATEWAY_MASTER_KEY has 1 characters');
    expect(refused.stderr).not.toContain('    at '); // a message, not a stack trace
    await expect(fetch(`http://127.0.0.1:${port}/health/liveliness`)).rejects.toThrow();
    const local = await spawnGateway(['--data-dir', dataDir], { GATEWAY_MASTER_KEY: 'sk-1234' });
    running.push(local);
    expect(local.output()).toContain('Accepted because the gateway listens on loopback only');
    const admin = await fetch(`${local.baseUrl}/ui/api/keys`, {
      headers: { authorization: 'Bearer sk-1234' },
    });
    expect(admin.status).toBe(200);
  });

  it('names database_url (without its password) in one line when the database cannot be reached (issue 10)', async () => {
    const folder = tempFolder();
    const config = join(folder, 'db.yaml');
    const port = await freePort();
    writeFileSync(
      config,
      `general_settings:\n  database_url: postgres://switchboard:hunter2@127.0.0.1:${port}/gateway\n  master_key: sk-a-long-enough-master-key\n`,
    );
    const { code, stderr } = await runCli(['serve', '--config', config, '--data-dir', folder]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `cannot use the database at general_settings.database_url (postgres://switchboard:***@127.0.0.1:${port}/gateway)`,
    );
    expect(stderr).not.toContain('hunter2');
    expect(stderr).not.toContain('    at ');
  });

  it("names telemetry_database_url, not database_url, when spend's own database cannot be reached in outbox mode (issue 25)", async () => {
    const folder = tempFolder();
    const config = join(folder, 'telemetry.yaml');
    const port = await freePort();
    writeFileSync(
      config,
      `general_settings:\n  database_url: ${JSON.stringify(join(folder, 'main.db'))}\n  spend_ingestion_mode: outbox\n  telemetry_database_url: postgres://spend:hunter2@127.0.0.1:${port}/telemetry\n  master_key: sk-a-long-enough-master-key\n`,
    );
    const { code, stderr } = await runCli(['serve', '--config', config, '--data-dir', folder]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `cannot use the database at general_settings.telemetry_database_url (postgres://spend:***@127.0.0.1:${port}/telemetry)`,
    );
    expect(stderr).not.toContain('general_settings.database_url');
    expect(stderr).not.toContain('hunter2');
  });

  it('names a provider param problem with its path and exits non-zero', async () => {
    const folder = tempFolder();
    const config = join(folder, 'provider.yaml');
    writeFileSync(
      config,
      'model_list:\n  - model_name: a\n    params: { provider: fake, model: a, latency_ms: -1 }\n  - model_name: b\n    params: { provider: faek, model: b }\n',
    );
    const { code, stderr } = await runCli(['serve', '--config', config]);
    expect(code).toBe(1);
    expect(stderr).toContain('model_list[0].params.latency_ms: must be an integer ≥ 0');
    expect(stderr).toContain(
      "model_list[1].params.provider: 'faek' is not a supported provider (did you mean 'fake'?)",
    );
  });

  it('starts on the embedded default, prints a master key once, and serves demo to the openai SDK', async () => {
    const dataDir = join(tempFolder(), 'fresh');
    const env = { GATEWAY_MASTER_KEY: '' };
    const gateway = await spawnGateway(['--data-dir', dataDir], env);
    running.push(gateway);
    const masterKey = readFileSync(join(dataDir, 'master.key'), 'utf8').trim();
    expect(gateway.output()).toContain(masterKey);
    expect(gateway.output()).toContain('curl -s');

    const created = await fetch(`${gateway.baseUrl}/ui/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key_name: 'sdk' }),
    });
    const { key } = (await created.json()) as { key: string };
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'demo',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(completion.choices[0]?.message.content).toBe('You said: Say hello');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    const stream = await client.chat.completions.create({
      model: 'demo',
      stream: true,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('You said: Say hello');
    // Issue 9: the data folder and every file in it are private (the database can unseal MCP tokens).
    const mode = (name: string) => statSync(join(dataDir, name)).mode & 0o777;
    expect(mode('.')).toBe(0o700);
    for (const name of ['master.key', 'switchboard.db', 'switchboard.db-wal', 'switchboard.db-shm'])
      expect(mode(name), name).toBe(0o600);

    await gateway.stop();
    const restarted = await spawnGateway(['--data-dir', dataDir], env);
    running.push(restarted);
    expect(restarted.output()).not.toContain(masterKey);
    const again = await fetch(`${restarted.baseUrl}/v1/models`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(again.status).toBe(200);
  });

  it('finishes an in-flight request after SIGTERM, reports not ready meanwhile, then exits 0', async () => {
    const folder = tempFolder();
    const config = join(folder, 'slow.yaml');
    // An upstream that takes 1.5 s to answer (simulated latency), in this process: the test sees the
    // request arrive there, so SIGTERM is sent while it is in flight, not after a guessed sleep.
    const upstream = await FakeOpenAiServer.start();
    upstream.defaultScenario = { kind: 'answer', firstByteDelayMs: 1500 };
    writeFileSync(
      config,
      `model_list:\n  - model_name: slow\n    params: { provider: openai, model: slow, api_base: ${JSON.stringify(upstream.baseUrl)} }\ngeneral_settings:\n  master_key: sk-master-drain-test\n  database_url: ${JSON.stringify(join(folder, 'db.sqlite'))}\n`,
    );
    const gateway = await spawnGateway(['--config', config]);
    running.push(gateway);
    const inFlight = fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-master-drain-test', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'wait' }] }),
    });
    try {
      await expect.poll(() => upstream.requests.length, { timeout: 15_000 }).toBe(1);
      const exited = gateway.stop('SIGTERM');
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { choices: unknown[] }).choices).toHaveLength(1);
      expect(await exited).toBe(0);
    } finally {
      await upstream.close();
    }
  });
});
