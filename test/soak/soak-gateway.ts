/**
 * The system under soak: the real CLI as a child process (so its RSS, descriptors and event loop are its
 * own), a fake OpenAI upstream and a fake MCP upstream. The fakes live in the soak's process: at the
 * soak's rates they cost a few percent of a core, and nothing measured (the gateway's /proc and /metrics)
 * is shared with them. Production backends are PostgreSQL in a private schema and Redis under a private
 * key prefix; the embedded ones are a SQLite file and the in-process store.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { dropSchema } from '../support/backends.ts';
import { type SpawnedGateway, spawnGateway } from '../support/spawn-gateway.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';
import { CallerConnections } from './caller-connections.ts';

export type BackendKind = 'production' | 'embedded';

export interface SoakSystem {
  gateway: SpawnedGateway;
  pid: number;
  apiKey: string;
  model: string;
  mcpServerKey: string;
  /** Forgets what the fakes recorded (they keep every request; a soak only needs the answers). */
  trimRecordings(): void;
  close(): Promise<void>;
}

const MODEL = 'soak';
const MCP_SERVER_KEY = 'soaktools';
// Nine words, streamed one chunk each 5 ms apart: a stream stays open ~50 ms, so several overlap.
const ANSWER = 'the quick brown fox jumps over the lazy dog';

export async function startSoakSystem(backend: BackendKind): Promise<SoakSystem> {
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-soak-'));
  const upstream = await FakeOpenAiServer.start();
  upstream.defaultScenario = { kind: 'answer', text: ANSWER, chunkDelayMs: 5 };
  const mcp = await startFakeMcpServer({ mode: 'stateful' });
  const masterKey = `sk-soak-master-${randomBytes(12).toString('hex')}`;
  const storage = backend === 'production' ? await productionStorage() : embeddedStorage(folder);
  const config = join(folder, 'switchboard.yaml');
  writeFileSync(
    config,
    `model_list:
  - model_name: ${MODEL}
    params: { provider: openai, model: gpt-soak, api_base: ${JSON.stringify(upstream.baseUrl)}, api_key: sk-fake-upstream }
general_settings:
  master_key: ${masterKey}
${storage.yaml}
  # A catalogue refresh every minute, so a 10-minute soak runs the refresh path several times.
  mcp_catalog_refresh_interval_seconds: 60
`,
  );
  let gateway: SpawnedGateway | undefined;
  try {
    gateway = await spawnGateway(['--config', config, '--data-dir', folder]);
    if (gateway.child.exitCode !== null || gateway.child.pid === undefined)
      throw new Error(`the gateway did not start:\n${gateway.output()}`);
    // Provisioning's connections are closed before the baseline is taken, so it does not count them.
    const connections = CallerConnections.open();
    const { apiKey, mcpServerKey } = await provision(gateway.baseUrl, masterKey, mcp).finally(() =>
      connections.close(),
    );
    const started = gateway;
    return {
      gateway: started,
      pid: started.child.pid!,
      apiKey,
      model: MODEL,
      mcpServerKey,
      trimRecordings() {
        upstream.requests.length = 0;
        mcp.requests.length = 0;
      },
      async close() {
        await started.stop();
        await Promise.all([upstream.close(), mcp.close()]);
        await storage.cleanup();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await gateway?.stop('SIGKILL');
    await Promise.all([upstream.close(), mcp.close()]);
    await storage.cleanup();
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

/** A key with limits (so admission runs its full path), an MCP upstream bound to it, and tool policies. */
async function provision(baseUrl: string, masterKey: string, mcp: FakeMcpServer) {
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(`${baseUrl}/ui/api/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as any;
    if (response.status >= 300)
      throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(answer)}`);
    return answer;
  };
  const key = await admin('keys', { key_name: 'soak', rpm_limit: 1_000_000, max_parallel_requests: 200 });
  const server = await admin('mcp-servers', {
    server_key: MCP_SERVER_KEY,
    base_url: mcp.url,
    transport: 'http',
  });
  await admin('mcp-bindings', { server_id: server.server_id, scope_type: 'api_key', scope_id: key.key_id });
  // Concurrency slots and rpm counters on every call; add's results are cached, so hits are exercised too.
  await admin('mcp-tool-policies', {
    server_id: server.server_id,
    tool_name: '*',
    max_rpm: 1_000_000,
    max_concurrency: 100,
  });
  await admin('mcp-tool-policies', {
    server_id: server.server_id,
    tool_name: 'add',
    max_rpm: 1_000_000,
    max_concurrency: 100,
    result_cache_ttl_seconds: 30,
  });
  return { apiKey: key.key as string, mcpServerKey: MCP_SERVER_KEY };
}

interface Storage {
  yaml: string;
  cleanup(): Promise<void>;
}

function embeddedStorage(folder: string): Storage {
  return {
    yaml: `  database_url: ${JSON.stringify(join(folder, 'switchboard.db'))}`,
    cleanup: async () => {},
  };
}

async function productionStorage(): Promise<Storage> {
  const schema = uniqueName('soak');
  const prefix = `${uniqueName('soak')}:`;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA "${schema}"`);
  } finally {
    await client.end();
  }
  const databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    // The shared Redis answers other helpers too: a slow answer must not flip admission to fail_open.
    yaml: [
      `  database_url: ${JSON.stringify(databaseUrl)}`,
      `  redis_url: ${JSON.stringify(TEST_REDIS_URL)}`,
      `  redis_key_prefix: ${JSON.stringify(prefix)}`,
      '  redis_command_timeout_ms: 1000',
    ].join('\n'),
    async cleanup() {
      await dropSchema(schema);
      await deleteKeys(prefix);
    },
  };
}

/** Deletes this soak's keys (and only those) from the shared Redis. */
async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => {});
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
