/**
 * Large batch files do not stall other tenants (issue 25): a gateway process (the real CLI) with the
 * default `database` file store, on PostgreSQL and on SQLite, takes a 200 MiB JSONL upload and then
 * three concurrent downloads of it (curl at 40 MiB/s each, so the test process stays idle), while another tenant's key
 * sends a steady 1-token chat load. Measured: that tenant's chat p99 in each phase, and how far the
 * gateway's resident memory grew above its idle level. Figures go to the fault report.
 */
import { execFile } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type SpawnedGateway, spawnGateway } from '../support/spawn-gateway.ts';
import { realBackendsAvailable, TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';
import { dropSchemaNow, killIfRunning, onProcessExit } from './support/exit-cleanup.ts';
import { recordScenario } from './support/fault-report.ts';
import { isServed, type RequestRecord, SteadyLoad } from './support/steady-load.ts';

const run = promisify(execFile);
const MASTER_KEY = 'sk-master-large-files';
const FILE_BYTES = 200 * 1024 * 1024;
const WARM_BYTES = 20 * 1024 * 1024;
const LINES = 50_000;
const MiB = 1024 * 1024;
// Each transfer at a client's pace rather than loopback speed: unthrottled, three curl processes and
// PostgreSQL's backends fill both cores of a small machine, and the chat's latency then measures the
// machine's scheduler instead of the gateway.
const TRANSFER_RATE = '40M';
/** A chat this slow means another tenant was stalled, not that the machine was busy. */
const STALL_MS = 1_000;

if (!(await realBackendsAvailable()))
  throw new Error(
    'the large-file scenario needs PostgreSQL at TEST_DATABASE_URL (127.0.0.1:5432 by default)',
  );

describe.each(['postgres', 'sqlite'] as const)(
  'a 200 MiB batch file in the database store on %s',
  (backend) => {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-large-files-'));
    const schema = uniqueName('lbf');
    const input = join(dir, 'input.jsonl');
    const warmInput = join(dir, 'warm.jsonl');
    let upstream: FakeOpenAiServer;
    let gateway: SpawnedGateway;
    const forgetExit = onProcessExit(() => {
      if (gateway) killIfRunning(gateway.child);
      rmSync(dir, { recursive: true, force: true });
      if (backend === 'postgres') dropSchemaNow(schema);
    });

    beforeAll(async () => {
      await writeInput(input, FILE_BYTES);
      await writeInput(warmInput, WARM_BYTES);
      upstream = await FakeOpenAiServer.start();
      const database =
        backend === 'postgres'
          ? `  database_url: ${JSON.stringify(`${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`)}\n  redis_url: ${JSON.stringify(TEST_REDIS_URL)}\n  redis_key_prefix: ${JSON.stringify(`${schema}:`)}\n  redis_command_timeout_ms: 1000\n`
          : `  database_url: ${JSON.stringify(join(dir, 'switchboard.db'))}\n`;
      if (backend === 'postgres') {
        const { default: pg } = await import('pg');
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        await client.query(`CREATE SCHEMA "${schema}"`).finally(() => client.end());
      }
      const configPath = join(dir, 'switchboard.yaml');
      await writeFile(
        configPath,
        `model_list:
  - model_name: demo
    params: { provider: openai, model: demo, api_base: ${JSON.stringify(upstream.baseUrl)}, api_key: sk-upstream-large }
general_settings:
  master_key: ${MASTER_KEY}
${database}  embeddings_batch_enabled: true
  batch_file_max_bytes: ${256 * MiB}
`,
        { mode: 0o600 },
      );
      gateway = await spawnGateway(['--config', configPath]);
    }, 120_000);
    afterAll(async () => {
      forgetExit();
      await gateway?.stop('SIGKILL');
      await upstream?.close();
      if (backend === 'postgres') dropSchemaNow(schema);
      rmSync(dir, { recursive: true, force: true });
    });

    it("streams: another tenant's chat is never stalled and memory grows by less than the file", async () => {
      const uploader = await createKey(gateway.baseUrl);
      const tenant = await createKey(gateway.baseUrl);
      const load = SteadyLoad.start({
        baseUrls: [gateway.baseUrl],
        apiKey: tenant,
        model: 'demo',
        ratePerSecond: 20,
        timeoutMs: 30_000,
        body: { max_tokens: 1 },
      });
      const memory = new RssSampler(gateway.child.pid!);
      try {
        await delay(1_000);
        const coldRss = memory.latest();
        // A 20 MiB round first: V8 sizes its young generation to the traffic once (up to 128 MiB on a
        // large machine, whatever the file), and connections, pools and code are warm.
        await roundTrip(gateway.baseUrl, uploader, warmInput, WARM_BYTES);
        await eventLoopDelay(gateway.baseUrl); // starts the gateway's own measure afresh
        const idleFrom = performance.now();
        await delay(3_000);
        const idleRss = memory.peakSince(idleFrom);
        const idleDelay = await eventLoopDelay(gateway.baseUrl);
        const phases = await roundTrip(gateway.baseUrl, uploader, input, FILE_BYTES, () =>
          eventLoopDelay(gateway.baseUrl),
        );

        const summary = await load.stop();
        memory.stop();
        const idle = latencies(load.between(idleFrom, phases.uploadFrom));
        const upload = latencies(load.between(phases.uploadFrom, phases.downloadFrom));
        const downloads = latencies(load.between(phases.downloadFrom, phases.downloadTo));
        const peak = memory.peakSince(phases.uploadFrom);
        const growthMiB = (peak - idleRss) / MiB;
        const figures =
          `chat p99 ${idle.p99} ms idle, ${upload.p99} ms during the upload ` +
          `(${seconds(phases.downloadFrom - phases.uploadFrom)} s), ${downloads.p99} ms during three downloads ` +
          `(${seconds(phases.downloadTo - phases.downloadFrom)} s); RSS ${Math.round(idleRss / MiB)} MiB idle ` +
          `after a 20 MiB round, +${Math.round(growthMiB)} MiB at peak (+${Math.round((peak - coldRss) / MiB)} MiB over the cold process); ` +
          `the gateway's event-loop delay p99/max ${idleDelay} ms idle, ${phases.delays[0]} ms during the upload, ${phases.delays[1]} ms during the downloads`;
        console.log(`[${backend}] ${figures}`);
        recordScenario({
          group: 'Batch files',
          scenario: '200 MiB JSONL upload, then three concurrent downloads, beside a 20/s chat load',
          mode: backend === 'postgres' ? 'database store, PostgreSQL' : 'database store, SQLite',
          requests: summary.requests,
          served: summary.served,
          errorsByStatus: summary.errorsByStatus,
          recoverySeconds: null,
          readinessSeconds: null,
          spend: 'not checked',
          notes: figures,
        });
        expect(summary.served).toBe(summary.requests);
        expect(upload.count).toBeGreaterThan(0);
        expect(downloads.count).toBeGreaterThan(0);
        // A file gathered in memory or on the event loop (ce6bc6b) stalled this chat for 2.7-7.8 s and grew
        // the process by more than the file (three downloads: +1 GB). Streamed, the tenant's p99 stays in
        // the tens of ms on a quiet machine (the figures above, in the report); the bounds here are the
        // defect's, with room for a loaded 2-core machine, so the test does not time the machine.
        expect(upload.p99).toBeLessThan(STALL_MS);
        expect(downloads.p99).toBeLessThan(STALL_MS);
        // 150 MiB: the quiet-machine peaks are +39 (PostgreSQL) and +95 MiB (SQLite, V8 growing its young
        // generation), loaded ones up to +125; a statement per query holding every written chunk was +200.
        expect(growthMiB).toBeLessThan(150);
      } finally {
        memory.stop();
        await load.stop();
      }
    }, 600_000);
  },
);

/**
 * Uploads the file, then downloads it three times at once (each checked whole); when each phase began,
 * and what `afterPhase` measured at the end of each.
 */
async function roundTrip(
  baseUrl: string,
  key: string,
  path: string,
  bytes: number,
  afterPhase: () => Promise<string> = async () => '',
) {
  const uploadFrom = performance.now();
  const fileId = await upload(baseUrl, key, path);
  const delays = [await afterPhase()];
  const downloadFrom = performance.now();
  const sizes = await Promise.all([1, 2, 3].map(() => download(baseUrl, key, fileId)));
  const downloadTo = performance.now();
  delays.push(await afterPhase());
  if (sizes.some((size) => size !== bytes))
    throw new Error(`downloads of ${sizes.join(', ')} bytes, not ${bytes}`);
  return { uploadFrom, downloadFrom, downloadTo, delays };
}

/**
 * The gateway's own event-loop delay since the last call, `p99/max` in ms: prom-client's monitor, which
 * each scrape of /metrics reads and resets. Unlike the chat latency, it leaves out the test's side.
 */
async function eventLoopDelay(baseUrl: string): Promise<string> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const value = (name: string) =>
    Math.round(Number(new RegExp(`^${name} ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? Number.NaN) * 1000);
  return `${value('nodejs_eventloop_lag_p99_seconds')}/${value('nodejs_eventloop_lag_max_seconds')}`;
}

/** LINES embedding requests of equal length, exactly `bytes` in all, written as a stream. */
async function writeInput(path: string, bytes: number): Promise<void> {
  const out = createWriteStream(path);
  const lineBytes = bytes / LINES; // 4194.304 for 200 MiB: the last line takes the remainder
  let written = 0;
  for (let index = 0; index < LINES; index++) {
    const target = index === LINES - 1 ? bytes - written : Math.floor(lineBytes);
    const head = `{"custom_id":"r${index}","method":"POST","url":"/v1/embeddings","body":{"model":"demo","input":"`;
    const tail = '"}}\n';
    const line = head + 'x'.repeat(target - head.length - tail.length) + tail;
    written += line.length;
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

async function createKey(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/ui/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ key_name: uniqueName('k') }),
  });
  const body = (await response.json()) as { key: string };
  if (!response.ok) throw new Error(`key creation answered ${response.status}`);
  return body.key;
}

async function upload(baseUrl: string, key: string, path: string): Promise<string> {
  const { stdout } = await run(
    'curl',
    [
      '-sS',
      '--limit-rate',
      TRANSFER_RATE,
      '-H',
      `authorization: Bearer ${key}`,
      '-F',
      'purpose=batch',
      '-F',
      `file=@${path}`,
      `${baseUrl}/v1/files`,
    ],
    { maxBuffer: MiB },
  );
  const body = JSON.parse(stdout) as { id?: string };
  if (!body.id) throw new Error(`the upload was refused: ${stdout}`);
  return body.id;
}

async function download(baseUrl: string, key: string, id: string): Promise<number> {
  const { stdout } = await run('curl', [
    '-sS',
    '--limit-rate',
    TRANSFER_RATE,
    '-o',
    '/dev/null',
    '-w',
    '%{size_download}',
    '-H',
    `authorization: Bearer ${key}`,
    `${baseUrl}/v1/files/${id}/content`,
  ]);
  return Number(stdout);
}

/** The served requests' latency: count and p99 in whole ms. */
function latencies(records: readonly RequestRecord[]): { count: number; p99: number } {
  const ms = records
    .filter((record) => isServed(record.outcome))
    .map((record) => record.endedAt - record.startedAt)
    .sort((a, b) => a - b);
  const p99 = ms.length === 0 ? 0 : ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)]!;
  return { count: ms.length, p99: Math.round(p99) };
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}

/** Samples a process's resident set (VmRSS) every 20 ms. */
class RssSampler {
  private readonly samples: Array<{ at: number; bytes: number }> = [];
  private readonly timer: NodeJS.Timeout;

  constructor(pid: number) {
    this.timer = setInterval(() => {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match) this.samples.push({ at: performance.now(), bytes: Number(match[1]) * 1024 });
    }, 20);
  }

  latest(): number {
    return this.samples.at(-1)?.bytes ?? 0;
  }

  peakSince(from: number): number {
    return Math.max(...this.samples.filter((sample) => sample.at >= from).map((sample) => sample.bytes));
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
