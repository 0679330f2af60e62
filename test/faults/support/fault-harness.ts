/**
 * The fault suite's harness: two gateway processes (the real CLI) on one Redis and one PostgreSQL, a fake
 * OpenAI upstream in the test process, a config file in a private temp dir, keys made through the admin
 * API, and the checks every scenario makes after its fault: readiness flips (ReadinessWatch), no leaked
 * `max_parallel_requests` slot, no request past its deadline, processes alive, spend exactly once.
 *
 * Redis is a private redis-server unless `redis: 'shared'`; PostgreSQL is a private cluster when the
 * scenario kills it (`postgres: 'private'`), else a private schema of the shared server.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { FakeOpenAiServer } from '../../fakes/fake-openai-server.ts';
import { PrivateRedis } from '../../support/private-redis.ts';
import { type SpawnedGateway, spawnGateway } from '../../support/spawn-gateway.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../support/test-env.ts';
import { uniqueName } from '../../support/unique-name.ts';
import { dropSchemaNow, killIfRunning, onProcessExit } from './exit-cleanup.ts';
import { PrivatePostgres } from './private-postgres.ts';
import { ReadinessWatch } from './readiness-watch.ts';
import { SecretSweep } from './secret-sweep.ts';
import { isServed, type LoadOptions, type RequestRecord, SteadyLoad } from './steady-load.ts';

// Scenarios import the readiness probe with the harness.
export { type ReadinessSample, ReadinessWatch } from './readiness-watch.ts';

export interface FaultHarnessOptions {
  /** Gateway processes (default 2). */
  gateways?: number;
  redis?: 'private' | 'shared';
  postgres?: 'private' | 'shared';
  degradedMode?: 'fail_open' | 'fail_closed';
  spendMode?: 'legacy' | 'outbox';
  /** general_settings.request_timeout_seconds (default 5): short, so a stuck request shows. */
  requestTimeoutSeconds?: number;
  /** Extra model_list entries, indented two spaces (e.g. a model on an upstream that holds requests). */
  models?: string;
  /** Extra general_settings lines, indented two spaces. */
  generalSettings?: string;
  env?: Record<string, string>;
}

export const MASTER_KEY = 'sk-master-fault-suite';

export class FaultHarness {
  readonly gateways: SpawnedGateway[] = [];
  upstream!: FakeOpenAiServer;
  redis: PrivateRedis | undefined;
  postgres: PrivatePostgres | undefined;
  readonly requestTimeoutSeconds: number;
  private readonly options: FaultHarnessOptions;
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchboard-faults-'));
  private readonly schema = uniqueName('flt');
  private readonly configPath = join(this.dir, 'switchboard.yaml');
  private databaseUrl = '';

  private constructor(options: FaultHarnessOptions) {
    this.options = options;
    this.requestTimeoutSeconds = options.requestTimeoutSeconds ?? 5;
  }

  // A harness abandoned by a test timeout never reaches stop(): its children and schema go at exit.
  private readonly forgetExit = onProcessExit(() => this.killNow());
  private readonly secrets = new SecretSweep(MASTER_KEY);

  static async start(options: FaultHarnessOptions = {}): Promise<FaultHarness> {
    const harness = new FaultHarness(options);
    try {
      await harness.boot();
    } catch (error) {
      await harness.stop().catch(() => {}); // the start's failure is the one to report
      throw error;
    }
    return harness;
  }

  /** A client on the gateways' database (its schema on the shared server); the caller ends it. */
  async database(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 2_000 });
    await client.connect();
    return client;
  }

  baseUrls(): string[] {
    return this.gateways.map((gateway) => gateway.baseUrl);
  }

  /** Calls the admin API with the master key on gateway `index`; throws unless 2xx. */
  async admin(method: string, path: string, body?: unknown, index = 0): Promise<any> {
    const response = await fetch(this.gateways[index]!.baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${MASTER_KEY}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  }

  /** Creates a key through the admin API and returns its secret. */
  async createKey(fields: Record<string, unknown> = {}): Promise<string> {
    const created = await this.admin('POST', '/ui/api/keys', { key_name: uniqueName('k'), ...fields });
    this.secrets.minted(created.key);
    return created.key as string;
  }

  /** A steady load on every gateway, model `demo`, client deadline a little past the gateway's. */
  load(apiKey: string, options: Partial<LoadOptions> = {}): SteadyLoad {
    return SteadyLoad.start({
      baseUrls: this.baseUrls(),
      apiKey,
      model: 'demo',
      ratePerSecond: 30,
      streamShare: 0.25,
      timeoutMs: this.deadlineMs(),
      ...options,
    });
  }

  /** The longest any request may take: the gateway's request timeout plus a margin for the load. */
  deadlineMs(): number {
    return this.requestTimeoutSeconds * 1_000 + 3_000;
  }

  /** One chat request (JSON) with a request id; its status and error code. */
  async chat(apiKey: string, index = 0, requestId?: string): Promise<{ status: number; code?: string }> {
    const response = await fetch(`${this.gateways[index]!.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        ...(requestId ? { 'x-request-id': requestId } : {}),
      },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
      signal: AbortSignal.timeout(this.deadlineMs()),
    });
    const body = (await response.json().catch(() => ({}))) as { error?: { code?: string } };
    return { status: response.status, ...(body.error?.code ? { code: body.error.code } : {}) };
  }

  /** True when every gateway process still runs (none crashed); `except` names those killed on purpose. */
  processesAlive(except: readonly number[] = []): boolean {
    return this.gateways.every((_, index) => except.includes(index) || this.gatewayAlive(index));
  }

  gatewayAlive(index: number): boolean {
    const child = this.gateways[index]!.child;
    return child.exitCode === null && child.signalCode === null;
  }

  /** SIGKILLs gateway `index` (a crash); its slot in `gateways` keeps the dead process until restarted. */
  async killGateway(index: number): Promise<void> {
    await this.gateways[index]!.stop('SIGKILL');
  }

  /** Starts gateway `index` again on its old port, so URLs held by a running load reach it again. */
  async restartGateway(index: number): Promise<void> {
    const old = this.gateways[index]!;
    await old.stop('SIGKILL');
    this.gateways[index] = await this.spawn(old.port);
  }

  /**
   * No leaked slot: with the upstream answering slowly, `limit + 1` concurrent requests on gateway
   * `index` give exactly `limit` answers and one 429 (a leaked slot would refuse more, a lost count
   * would admit all). Call it after the load has stopped.
   */
  async checkSlots(apiKey: string, limit: number, index = 0): Promise<{ served: number; refused: number }> {
    const previous = this.upstream.defaultScenario;
    this.upstream.defaultScenario = { kind: 'answer', firstByteDelayMs: 1_500 };
    try {
      const answers = await Promise.all(Array.from({ length: limit + 1 }, () => this.chat(apiKey, index)));
      return {
        served: answers.filter((answer) => answer.status === 200).length,
        refused: answers.filter((answer) => answer.status === 429).length,
      };
    } finally {
      this.upstream.defaultScenario = previous;
    }
  }

  /** Waits until the outbox is empty (every charge settled into spend_logs); false after `withinMs`. */
  async outboxSettled(withinMs: number): Promise<boolean> {
    const deadline = performance.now() + withinMs;
    while (performance.now() < deadline) {
      try {
        const client = await this.database();
        try {
          const { rows } = await client.query('select count(*)::int as n from spend_outbox');
          if (rows[0].n === 0) return true;
        } finally {
          await client.end();
        }
      } catch {
        // the database may still be coming back
      }
      await delay(100);
    }
    return false;
  }

  /**
   * Spend rows of the given requests: `missing` served requests without a row, `duplicated` requests
   * with more than one, `chargedUnserved` requests the caller did not get a 2xx for that have a row
   * with a 2xx status (charged for an answer the caller never received).
   */
  async spendOf(records: readonly RequestRecord[]): Promise<SpendCheck> {
    const client = await this.database();
    try {
      const ids = records.map((record) => record.requestId);
      const { rows } = await client.query(
        'select request_id, count(*)::int as n, max(status)::int as status from spend_logs where request_id = any($1) group by request_id',
        [ids],
      );
      const byId = new Map(
        rows.map((row) => [row.request_id as string, row as { n: number; status: number }]),
      );
      const check: SpendCheck = { rows: 0, missing: [], duplicated: [], chargedUnserved: [] };
      for (const record of records) {
        const row = byId.get(record.requestId);
        check.rows += row?.n ?? 0;
        if (row && row.n > 1) check.duplicated.push(record.requestId);
        if (isServed(record.outcome) && !row) check.missing.push(record.requestId);
        if (!isServed(record.outcome) && row && row.status >= 200 && row.status < 300)
          check.chargedUnserved.push(record.requestId);
      }
      return check;
    } finally {
      await client.end();
    }
  }

  /** Polls spendOf until nothing served is missing, or `withinMs` passed; the last check. */
  async spendSettled(records: readonly RequestRecord[], withinMs: number): Promise<SpendCheck> {
    const deadline = performance.now() + withinMs;
    for (;;) {
      const check = await this.spendOf(records).catch(() => undefined);
      if (check && (check.missing.length === 0 || performance.now() > deadline)) return check;
      if (!check && performance.now() > deadline) return this.spendOf(records);
      await delay(200);
    }
  }

  /** From the exit handler: SIGKILL of what still runs, the schema dropped, the dir removed. */
  private killNow(): void {
    for (const { child } of this.gateways) killIfRunning(child);
    void this.redis?.kill(); // its SIGKILL is sent synchronously
    rmSync(this.dir, { recursive: true, force: true });
    // A private PostgreSQL reaps itself at exit; a schema of the shared server needs dropping.
    if (!this.postgres && this.databaseUrl) dropSchemaNow(this.schema);
  }

  /** Stops everything; then fails if a gateway printed or exposed a secret (secret-sweep.ts). */
  async stop(): Promise<void> {
    this.forgetExit();
    const leak = await this.secrets.sweep(this.gateways);
    await Promise.all(this.gateways.map((gateway) => gateway.stop('SIGKILL')));
    await this.upstream?.close();
    await this.redis?.kill();
    if (this.postgres) await this.postgres.remove();
    else if (this.databaseUrl) {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`).finally(() => client.end());
    }
    rmSync(this.dir, { recursive: true, force: true });
    if (leak) throw new Error(leak);
  }

  private async boot(): Promise<void> {
    this.upstream = await FakeOpenAiServer.start();
    this.redis = this.options.redis === 'shared' ? undefined : await PrivateRedis.start();
    if (this.options.postgres === 'private') {
      this.postgres = await PrivatePostgres.start();
      this.databaseUrl = this.postgres.url;
    } else {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`CREATE SCHEMA "${this.schema}"`).finally(() => client.end());
      this.databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${this.schema}`)}`;
    }
    const config = this.config();
    this.secrets.config(config);
    writeFileSync(this.configPath, config, { mode: 0o600 });
    chmodSync(this.configPath, 0o600);
    // The first process runs the migrations alone; the others start together afterwards.
    this.gateways.push(await this.spawn());
    const others = await Promise.all(
      Array.from({ length: (this.options.gateways ?? 2) - 1 }, () => this.spawn()),
    );
    this.gateways.push(...others);
    for (const gateway of this.gateways) {
      const watch = new ReadinessWatch(gateway.baseUrl);
      try {
        if ((await watch.waitFor(true, 15_000)) === undefined)
          throw new Error(`${gateway.baseUrl} never became ready:\n${gateway.output()}`);
      } finally {
        await watch.stop();
      }
    }
  }

  private spawn(port?: number): Promise<SpawnedGateway> {
    return spawnGateway(['--config', this.configPath], this.options.env ?? {}, port);
  }

  private config(): string {
    const redisUrl = this.redis?.url ?? TEST_REDIS_URL;
    return `model_list:
  - model_name: demo
    params: { provider: openai, model: demo, api_base: ${JSON.stringify(this.upstream.baseUrl)}, api_key: sk-upstream-fault }
${this.options.models ?? ''}
general_settings:
  master_key: ${MASTER_KEY}
  database_url: ${JSON.stringify(this.databaseUrl)}
  redis_url: ${JSON.stringify(redisUrl)}
  redis_key_prefix: ${JSON.stringify(`${uniqueName('flt')}:`)}
  redis_degraded_mode: ${this.options.degradedMode ?? 'fail_open'}
  # A dropped connection is detected at once; the timeout only keeps a loaded 2-core machine from
  # mistaking its own slowness for a Redis outage.
  redis_command_timeout_ms: 1000
  spend_ingestion_mode: ${this.options.spendMode ?? 'outbox'}
  request_timeout_seconds: ${this.requestTimeoutSeconds}
${this.options.generalSettings ?? ''}`;
  }
}

export interface SpendCheck {
  /** Spend rows found for the requests. */
  rows: number;
  missing: string[];
  duplicated: string[];
  chargedUnserved: string[];
}

/** Seconds from `from` to `to`, rounded to 0.1 s, or null when `to` is undefined. */
export function secondsBetween(from: number, to: number | undefined): number | null {
  return to === undefined ? null : Math.round((to - from) / 100) / 10;
}

/** Requests that went past the deadline (client timeout, or longer than `deadlineMs`). */
export function pastDeadline(records: readonly RequestRecord[], deadlineMs: number): RequestRecord[] {
  return records.filter(
    (record) => record.outcome === 'timeout' || record.endedAt - record.startedAt > deadlineMs,
  );
}

/** `exact`, or what is wrong with the spend of a scenario (the report's spend column). */
export function spendVerdict(settled: boolean, spend: SpendCheck): string {
  const problems = [
    settled ? '' : 'outbox not settled',
    spend.missing.length ? `${spend.missing.length} served without a row` : '',
    spend.duplicated.length ? `${spend.duplicated.length} charged twice` : '',
    spend.chargedUnserved.length ? `${spend.chargedUnserved.length} charged but not served` : '',
  ].filter(Boolean);
  return problems.length ? problems.join(', ') : 'exact';
}
