/**
 * N gateway replicas (the real CLI, one process each) on one PostgreSQL schema and one Redis, behind a
 * real HAProxy: what the scale-out test and benchmark run against. The first replica starts alone so it
 * runs the migrations; the others start together afterwards. The upstream is the caller's. A replica can
 * be restarted in place (terminate, then respawn on the same port), as a rolling deploy does.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type SpawnedGateway, spawnGateway } from '../../support/spawn-gateway.ts';
import { TEST_DATABASE_URL } from '../../support/test-env.ts';
import { uniqueName } from '../../support/unique-name.ts';
import { Haproxy, type HaproxyOptions } from './haproxy.ts';
import { SecretSweep } from './secret-sweep.ts';

export interface ClusterOptions {
  replicas: number;
  /** `provider: openai` base URL (…/v1) every replica's one model points at. */
  upstreamBaseUrl: string;
  /** The public model name (default `demo`). */
  modelName?: string;
  redisUrl: string;
  /** Extra model_list entries, indented two spaces (e.g. a model whose upstream holds requests). */
  models?: string;
  /** Extra general_settings lines, indented two spaces. */
  generalSettings?: string;
  /** Environment of every replica (LOG_LEVEL defaults to warn). */
  env?: Record<string, string>;
  haproxy?: Omit<HaproxyOptions, 'serverPorts'>;
}

export interface AdminAnswer {
  status: number;
  body: any;
}

export class ReplicaCluster {
  readonly masterKey = 'sk-master-scale-out';
  readonly schema = uniqueName('so');
  readonly replicas: SpawnedGateway[] = [];
  readonly db: pg.Client;
  haproxy!: Haproxy;
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchboard-scale-out-'));
  private readonly configPath = join(this.dir, 'switchboard.yaml');
  /** Replicas replaced by respawn(): their output is still swept for secrets at stop(). */
  private readonly retired: SpawnedGateway[] = [];
  private readonly options: ClusterOptions;
  private readonly secrets: SecretSweep;

  private constructor(options: ClusterOptions) {
    this.options = options;
    this.db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    this.secrets = new SecretSweep(this.masterKey);
  }

  static async start(options: ClusterOptions): Promise<ReplicaCluster> {
    const cluster = new ReplicaCluster(options);
    // A start abandoned by a hook timeout never reaches stop(): the test process's exit must not leave
    // replicas and HAProxy running. A synchronous SIGKILL is all an exit handler can do.
    process.once('exit', () => cluster.killNow());
    try {
      await cluster.boot();
    } catch (error) {
      await cluster.stop().catch(() => {}); // the start's failure is the one to report
      throw error;
    }
    return cluster;
  }

  get url(): string {
    return this.haproxy.url;
  }

  /** Calls the admin API with the master key, on a replica (by index) or through HAProxy. */
  async admin(method: string, path: string, body?: unknown, replica?: number): Promise<AdminAnswer> {
    const base = replica === undefined ? this.url : this.replicas[replica]!.baseUrl;
    const response = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${this.masterKey}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const answer = text ? JSON.parse(text) : undefined;
    if (typeof answer?.key === 'string') this.secrets.minted(answer.key);
    return { status: response.status, body: answer };
  }

  /** Like admin, but throws unless the answer is 2xx. */
  async adminOk(method: string, path: string, body?: unknown, replica?: number): Promise<any> {
    const answer = await this.admin(method, path, body, replica);
    if (answer.status >= 300)
      throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  async count(sql: string): Promise<number> {
    return Number((await this.db.query(sql)).rows[0].n);
  }

  /**
   * SIGTERM to replica `index`: its own shutdown follows (docs/operations.md, Shutdown). Resolves with
   * its exit code once it exited; its slot (and HAProxy's server entry) stays for respawn().
   */
  async terminate(index: number): Promise<number | null> {
    const replica = this.replicas[index]!;
    const code = await replica.stop('SIGTERM');
    this.retired.push(replica);
    return code;
  }

  /** Starts replica `index` again, same configuration, same port; resolves once it reports ready. */
  async respawn(index: number): Promise<void> {
    const old = this.replicas[index]!;
    if (old.child.exitCode === null && old.child.signalCode === null)
      throw new Error(`replica ${index} still runs: terminate it first`);
    const replica = await spawnGateway(['--config', this.configPath], this.options.env ?? {}, old.port);
    this.replicas[index] = replica;
    await untilReady(replica, performance.now() + 60_000);
  }

  /** SIGKILL of every child still running (from an exit handler; exited ones are skipped: PIDs get reused). */
  killNow(): void {
    this.haproxy?.killNow();
    for (const { child } of this.replicas) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }

  /** Stops everything; then fails if a replica printed or exposed a secret (secret-sweep.ts). */
  async stop(): Promise<void> {
    const leak = await this.secrets.sweep([...this.retired, ...this.replicas]);
    await this.haproxy?.stop();
    await Promise.all(this.replicas.map((replica) => replica.stop('SIGKILL')));
    try {
      await this.db.query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
    } catch {
      // never connected
    }
    await this.db.end().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
    if (leak) throw new Error(leak);
  }

  private async boot(): Promise<void> {
    await this.db.connect();
    await this.db.query(`CREATE SCHEMA "${this.schema}"`);
    const databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${this.schema}`)}`;
    const config = this.configPath;
    writeFileSync(
      config,
      `model_list:
  - model_name: ${this.options.modelName ?? 'demo'}
    params: { provider: openai, model: demo, api_base: ${JSON.stringify(this.options.upstreamBaseUrl)}, api_key: sk-upstream }
${this.options.models ?? ''}
general_settings:
  master_key: ${this.masterKey}
  database_url: ${JSON.stringify(databaseUrl)}
  redis_url: ${JSON.stringify(this.options.redisUrl)}
  # Exactness is under test: a shared 2-core machine running three replicas and HAProxy can delay
  # Redis replies by seconds; a stall past the timeout (three in a row) would turn to per-process counters.
  redis_command_timeout_ms: 2000
${this.options.generalSettings ?? ''}`,
    );
    this.secrets.config(readFileSync(config, 'utf8'));
    const spawn = async () => {
      const replica = await spawnGateway(['--config', config], this.options.env ?? {});
      this.replicas.push(replica);
      return replica;
    };
    await spawn();
    await Promise.all(Array.from({ length: this.options.replicas - 1 }, spawn));
    // Name r<i> follows the order of this.replicas, which the pushes above fixed.
    this.haproxy = await Haproxy.start({
      ...this.options.haproxy,
      serverPorts: this.replicas.map((replica) => replica.port),
    });
    await this.waitUntilRouted();
  }

  /** Until every replica is ready and HAProxy forwards to them (checks start as soon as it runs). */
  private async waitUntilRouted(): Promise<void> {
    const deadline = performance.now() + 60_000;
    for (const replica of this.replicas) await untilReady(replica, deadline);
    while ((await fetch(`${this.url}/health/readiness`).catch(() => undefined))?.status !== 200) {
      if (performance.now() > deadline) throw new Error(`HAProxy never routed:\n${this.haproxy.text()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Until the replica's /health/readiness answers 200; throws with its output past `deadline` (performance.now()). */
async function untilReady(replica: SpawnedGateway, deadline: number): Promise<void> {
  while ((await fetch(`${replica.baseUrl}/health/readiness`).catch(() => undefined))?.status !== 200) {
    if (performance.now() > deadline)
      throw new Error(`replica ${replica.baseUrl} not ready:\n${replica.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
