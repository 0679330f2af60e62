/**
 * The upstream scenarios' set-up: two gateway processes (the real CLI) on one PostgreSQL schema and one
 * Redis key prefix of the shared servers, in front of a hostile upstream and a healthy one. Groups:
 * `pair` (a hostile and a healthy deployment: failover can show), `solo` (the hostile one alone: the
 * fault reaches the caller) and `calm` (healthy only: another caller's model). Timeouts are short so a
 * stuck request shows within the suite's time. Kept apart from fault-harness.ts (one model, the fake
 * OpenAI server), which the dependency scenarios own.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { HostileUpstream } from '../../fakes/hostile-upstream.ts';
import { type SpawnedGateway, spawnGateway } from '../../support/spawn-gateway.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../support/test-env.ts';
import { uniqueName } from '../../support/unique-name.ts';
import { dropSchemaNow, killIfRunning, onProcessExit } from './exit-cleanup.ts';
import { ReadinessWatch } from './readiness-watch.ts';
import { SecretSweep } from './secret-sweep.ts';
import type { Answer } from './upstream-load.ts';

const MASTER_KEY = 'sk-master-upstream-faults';

/** Seconds: one non-streaming attempt (long enough to read 64 MiB on a loaded machine), a stream's
 * silence, and the whole call across retries. */
export const ATTEMPT_TIMEOUT_S = 2;
export const STREAM_TIMEOUT_S = 1;
export const REQUEST_TIMEOUT_S = 4;
/**
 * The longest a caller may wait for any answer: the request deadline plus a margin for a loaded 2-core
 * machine (the flood scenarios saturate it; a stall, like a stream held by a dripping line, lasts far
 * longer than this).
 */
export const DEADLINE_MS = REQUEST_TIMEOUT_S * 1_000 + 4_000;

export class UpstreamCluster {
  readonly gateways: SpawnedGateway[] = [];
  hostile!: HostileUpstream;
  healthy!: HostileUpstream;
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchboard-upstream-faults-'));
  private readonly schema = uniqueName('upf');

  private readonly forgetExit = onProcessExit(() => this.killNow());
  private readonly secrets = new SecretSweep(MASTER_KEY);

  /**
   * An unbooted cluster: assign it before `boot()`, so an `afterAll` can stop a half-started one after
   * a hook timeout (and the exit handler kills what a still-running boot spawns later).
   */
  static create(): UpstreamCluster {
    return new UpstreamCluster();
  }

  /** Starts the upstreams, the schema and the gateways; stops what it started when it fails. */
  async boot(): Promise<void> {
    try {
      await this.launch();
    } catch (error) {
      await this.stop().catch(() => {}); // the start's failure is the one to report
      throw error;
    }
  }

  baseUrls(): string[] {
    return this.gateways.map((gateway) => gateway.baseUrl);
  }

  async createKey(fields: Record<string, unknown> = {}): Promise<string> {
    const response = await fetch(`${this.gateways[0]!.baseUrl}/ui/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key_name: uniqueName('k'), ...fields }),
    });
    const body = (await response.json()) as { key?: string };
    if (!response.ok || !body.key) throw new Error(`key creation answered ${response.status}`);
    this.secrets.minted(body.key);
    return body.key;
  }

  /** True when no gateway process exited (crashed). */
  alive(): boolean {
    return this.gateways.every((g) => g.child.exitCode === null && g.child.signalCode === null);
  }

  /** Resets each process's peak RSS (VmHWM), so `peakRssMb` reports the peak since this call. */
  resetPeakRss(): void {
    for (const gateway of this.gateways) writeFileSync(`/proc/${gateway.child.pid}/clear_refs`, '5');
  }

  /** Per process: resident and peak resident memory in MiB, from /proc (the kernel's own counters). */
  memory(): { rssMb: number; peakRssMb: number }[] {
    return this.gateways.map((gateway) => {
      const status = readFileSync(`/proc/${gateway.child.pid}/status`, 'utf8');
      const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
      return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
    });
  }

  /**
   * No leaked `max_parallel_requests` slot: with the healthy upstream answering slowly, `limit + 1`
   * concurrent requests with the key give exactly `limit` answers and one 429 (a leaked slot refuses
   * more). Call it once the load has ended.
   */
  async checkSlots(
    apiKey: string,
    limit: number,
  ): Promise<{ served: number; refused: number; other: number[] }> {
    this.healthy.healthyDelayMs = 800;
    try {
      const statuses = await Promise.all(
        Array.from({ length: limit + 1 }, async () => {
          const response = await fetch(`${this.gateways[0]!.baseUrl}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'calm', messages: [{ role: 'user', content: 'slot' }] }),
            signal: AbortSignal.timeout(DEADLINE_MS),
          });
          await response.arrayBuffer();
          return response.status;
        }),
      );
      return {
        served: statuses.filter((status) => status === 200).length,
        refused: statuses.filter((status) => status === 429).length,
        other: statuses.filter((status) => status !== 200 && status !== 429),
      };
    } finally {
      this.healthy.healthyDelayMs = 0;
    }
  }

  /**
   * Seconds from `since` until a request of `model` (JSON, then a stream) is served on every gateway,
   * polled every 100 ms; null when that takes longer than `withinMs`.
   */
  async recoverySeconds(
    apiKey: string,
    model: string,
    since: number,
    withinMs = 10_000,
  ): Promise<number | null> {
    const deadline = performance.now() + withinMs;
    const served = async (baseUrl: string, stream: boolean) => {
      const response = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'back?' }] }),
        signal: AbortSignal.timeout(DEADLINE_MS),
      });
      const text = await response.text();
      return response.ok && (!stream || text.includes('data: [DONE]'));
    };
    for (const baseUrl of this.baseUrls())
      for (const stream of [false, true])
        while (!(await served(baseUrl, stream))) {
          if (performance.now() > deadline) return null;
          await delay(100);
        }
    return Math.round((performance.now() - since) / 100) / 10;
  }

  /** Waits until the hostile upstream has no answer open (the gateways hung up on every one). */
  async upstreamReleased(withinMs: number): Promise<boolean> {
    const deadline = performance.now() + withinMs;
    while (this.hostile.openAnswers > 0 && performance.now() < deadline) await delay(50);
    return this.hostile.openAnswers === 0;
  }

  /**
   * Spend of the answers once the outbox has settled: `exact` when every served answer has exactly one
   * row, no answer has more than one, and no answer the caller got as an error status has a 2xx row;
   * otherwise what is wrong. A stream cut after content may have its one row (partial output is billed).
   */
  async spendVerdict(answers: readonly Answer[], withinMs = 8_000): Promise<string> {
    const deadline = performance.now() + withinMs;
    const client = new pg.Client({ connectionString: this.databaseUrl() });
    await client.connect();
    try {
      for (;;) {
        const { rows: outbox } = await client.query('select count(*)::int as n from spend_outbox');
        const { rows } = await client.query(
          'select request_id, count(*)::int as n, max(status)::int as status from spend_logs where request_id = any($1) group by request_id',
          [answers.map((answer) => answer.requestId)],
        );
        const byId = new Map(
          rows.map((row) => [row.request_id as string, row as { n: number; status: number }]),
        );
        const served = answers.filter((a) => a.ending === 'served');
        const missing = served.filter((a) => !byId.has(a.requestId)).length;
        const settled = outbox[0].n === 0 && missing === 0;
        if (settled || performance.now() > deadline) {
          const twice = rows.filter((row) => row.n > 1).length;
          const chargedErrors = answers.filter((a) => {
            const row = byId.get(a.requestId);
            return a.ending === 'error' && row !== undefined && row.status >= 200 && row.status < 300;
          }).length;
          const problems = [
            outbox[0].n > 0 ? `${outbox[0].n} charges unsettled` : '',
            missing ? `${missing} served without a row` : '',
            twice ? `${twice} charged twice` : '',
            chargedErrors ? `${chargedErrors} charged as served but answered an error` : '',
          ].filter(Boolean);
          return problems.length ? problems.join(', ') : 'exact';
        }
        await delay(200);
      }
    } finally {
      await client.end();
    }
  }

  /**
   * Probes /health/readiness of every gateway every 200 ms (ReadinessWatch, open-loop) until `stop()`;
   * the statuses seen, 200 for ready and 0 for anything else.
   */
  watchReadiness(): { stop(): Promise<number[]> } {
    const watches = this.baseUrls().map((baseUrl) => new ReadinessWatch(baseUrl, 200));
    return {
      async stop() {
        await Promise.all(watches.map((watch) => watch.stop()));
        return watches.flatMap((watch) => watch.samples.map((sample) => (sample.ready ? 200 : 0)));
      },
    };
  }

  output(): string {
    return this.gateways.map((gateway, index) => `--- gateway ${index}\n${gateway.output()}`).join('\n');
  }

  /** From the exit handler: SIGKILL of the gateways still running, the schema dropped, the dir removed. */
  private killNow(): void {
    for (const { child } of this.gateways) killIfRunning(child);
    rmSync(this.dir, { recursive: true, force: true });
    dropSchemaNow(this.schema);
  }

  /** Stops everything; then fails if a gateway printed or exposed a secret (secret-sweep.ts). */
  async stop(): Promise<void> {
    this.forgetExit();
    const leak = await this.secrets.sweep(this.gateways);
    await Promise.all(this.gateways.map((gateway) => gateway.stop('SIGKILL')));
    await this.hostile?.close();
    await this.healthy?.close();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`).finally(() => client.end());
    rmSync(this.dir, { recursive: true, force: true });
    if (leak) throw new Error(leak);
  }

  private async launch(): Promise<void> {
    this.hostile = await HostileUpstream.start();
    this.healthy = await HostileUpstream.start();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA "${this.schema}"`).finally(() => client.end());
    const configPath = join(this.dir, 'switchboard.yaml');
    const config = this.config();
    this.secrets.config(config);
    writeFileSync(configPath, config, { mode: 0o600 });
    // The first process runs the migrations alone; the second starts on a migrated schema.
    for (let index = 0; index < 2; index++) {
      const gateway = await spawnGateway(['--config', configPath]);
      this.gateways.push(gateway);
      if (!(await ready(gateway.baseUrl, 15_000)))
        throw new Error(`gateway ${index} never became ready:\n${gateway.output()}`);
    }
  }

  private databaseUrl(): string {
    return `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${this.schema}`)}`;
  }

  private config(): string {
    const databaseUrl = this.databaseUrl();
    const deployment = (group: string, id: string, upstream: HostileUpstream, extra = '') =>
      `  - { model_name: ${group}, params: { provider: openai, model: m, api_base: "${upstream.baseUrl}", api_key: sk-upstream-faults${extra} }, model_info: { id: ${id} } }`;
    return `model_list:
${deployment('solo-long', 'solo-long-hostile', this.hostile, `, timeout: ${REQUEST_TIMEOUT_S}`)}
${deployment('pair', 'pair-hostile', this.hostile)}
${deployment('pair', 'pair-healthy', this.healthy)}
${deployment('solo', 'solo-hostile', this.hostile)}
${deployment('calm', 'calm-healthy', this.healthy)}
router_settings:
  num_retries: 2
  allowed_fails: 3
  cooldown_time: 2
  timeout: ${ATTEMPT_TIMEOUT_S}
  stream_timeout: ${STREAM_TIMEOUT_S}
general_settings:
  master_key: ${MASTER_KEY}
  database_url: ${JSON.stringify(databaseUrl)}
  redis_url: ${JSON.stringify(TEST_REDIS_URL)}
  redis_key_prefix: ${JSON.stringify(`${uniqueName('upf')}:`)}
  # A loaded 2-core machine must not mistake its own slowness for a Redis outage.
  redis_command_timeout_ms: 1000
  request_timeout_seconds: ${REQUEST_TIMEOUT_S}
  # Each charge durable before the answer ends, so the spend of every scenario can be checked exactly.
  spend_ingestion_mode: outbox
`;
  }
}

async function ready(baseUrl: string, withinMs: number): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  while (performance.now() < deadline) {
    try {
      const response = await fetch(`${baseUrl}/health/readiness`, { signal: AbortSignal.timeout(1_500) });
      await response.arrayBuffer();
      if (response.ok) return true;
    } catch {
      // not up yet
    }
    await delay(100);
  }
  return false;
}
