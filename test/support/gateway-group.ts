/**
 * Gateway processes (the real CLI) that share one PostgreSQL schema and one Redis, for tests of limits
 * across processes: a private config file (only what the test sets, so defaults are what is tested),
 * migrations run once before any gateway starts, start and restart of instances together (or one with
 * --workers), keys made through the admin API, bursts of concurrent chats tallied by status, and the
 * slot check (`max_parallel_requests` holds exactly: no slot leaked, none lost). Model `demo` answers at
 * once, `slow` after 1.5 s.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { dropSchema } from './backends.ts';
import { runCli, type SpawnedGateway, spawnGateway } from './spawn-gateway.ts';
import { TEST_DATABASE_URL } from './test-env.ts';
import { uniqueName } from './unique-name.ts';

const MASTER_KEY = 'sk-master-gateway-group';

export interface GatewayGroupOptions {
  redisUrl: string;
  /** Extra general_settings lines, indented two spaces. */
  generalSettings?: string;
}

export class GatewayGroup {
  running: SpawnedGateway[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchboard-group-'));
  /** The gateways' Redis key prefix. */
  readonly prefix = `${uniqueName('grp')}:`;
  private readonly schema = uniqueName('grp');
  private readonly configPath = join(this.dir, 'switchboard.yaml');

  private constructor() {}

  /** Writes the configuration and migrates its schema; no gateway runs yet. */
  static async prepare(options: GatewayGroupOptions): Promise<GatewayGroup> {
    const group = new GatewayGroup();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA "${group.schema}"`).finally(() => client.end());
    const databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${group.schema}`)}`;
    writeFileSync(
      group.configPath,
      `model_list:
  - { model_name: demo, params: { provider: fake, model: demo } }
  - { model_name: slow, params: { provider: fake, model: slow, latency_ms: 1500 } }
general_settings:
  master_key: ${MASTER_KEY}
  database_url: ${JSON.stringify(databaseUrl)}
  redis_url: ${JSON.stringify(options.redisUrl)}
  redis_key_prefix: ${JSON.stringify(group.prefix)}
${options.generalSettings ?? ''}`,
      { mode: 0o600 },
    );
    const migrated = await runCli(['migrate', '--config', group.configPath]);
    if (migrated.code !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);
    return group;
  }

  /** Starts `instances` gateways at once (each with `args`), and waits until every worker listens. */
  async start(instances: number, args: string[] = []): Promise<SpawnedGateway[]> {
    const started = await Promise.all(
      Array.from({ length: instances }, () =>
        spawnGateway(['--config', this.configPath, ...args], { LOG_LEVEL: 'info' }),
      ),
    );
    this.running.push(...started);
    const workers = Number(args[args.indexOf('--workers') + 1] ?? 1) || 1;
    for (const gateway of started) {
      for (let attempt = 0; (gateway.output().match(/Server listening/g) ?? []).length < workers; attempt++) {
        if (attempt > 600) throw new Error(`not every worker listens:\n${gateway.output()}`);
        await delay(50);
      }
    }
    return started;
  }

  /** Stops every running gateway (SIGTERM). */
  async stopAll(): Promise<void> {
    await Promise.all(this.running.map((gateway) => gateway.stop()));
    this.running = [];
  }

  async createKey(body: Record<string, unknown>): Promise<string> {
    return (await this.createKeyWithId(body)).key;
  }

  /** A key's secret and its id (the id names its counters in Redis: `rl:key:<id>:…`). */
  async createKeyWithId(body: Record<string, unknown>): Promise<{ key: string; keyId: string }> {
    const response = await fetch(`${this.running[0]!.baseUrl}/ui/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key_name: uniqueName('k'), ...body }),
    });
    if (response.status !== 201) throw new Error(`key creation answered ${response.status}`);
    const created = (await response.json()) as { key: string; key_id: string };
    return { key: created.key, keyId: created.key_id };
  }

  get baseUrls(): string[] {
    return this.running.map((gateway) => gateway.baseUrl);
  }

  /** `count` concurrent chats of `key`, spread round-robin over the running gateways; statuses tallied. */
  async burst(key: string, count: number, model = 'demo'): Promise<Record<number, number>> {
    const statuses = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const target = this.running[index % this.running.length]!;
        const response = await fetch(`${target.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: `request ${index}` }] }),
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const tally: Record<number, number> = {};
    for (const status of statuses) tally[status] = (tally[status] ?? 0) + 1;
    return tally;
  }

  /**
   * No leaked or lost slot: `limit + 1` concurrent slow requests give exactly `limit` answers and one
   * 429 (a leaked slot refuses more, a lost count admits all).
   */
  async checkSlots(key: string, limit: number): Promise<{ served: number; refused: number }> {
    const tally = await this.burst(key, limit + 1, 'slow');
    return { served: tally[200] ?? 0, refused: tally[429] ?? 0 };
  }

  /** A metric summed over the running gateways' /metrics. */
  async metric(name: string): Promise<number> {
    let total = 0;
    for (const gateway of this.running) {
      const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
      total += Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    }
    return total;
  }

  /** Every process stopped (SIGKILL), the schema dropped, the config removed. */
  async close(): Promise<void> {
    await Promise.all(this.running.map((gateway) => gateway.stop('SIGKILL')));
    this.running = [];
    await dropSchema(this.schema);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
