/**
 * `npm run bench:scale-out`: requests per second through a real HAProxy in front of 1, 2 and 3 gateway
 * replicas (the real CLI) on one PostgreSQL schema and one private Redis, against an upstream that
 * answers at once; plus what each request costs the shared stores: Redis commands per request
 * (`INFO commandstats` of the private Redis) and database row writes per request (inserted, updated
 * and deleted rows of the run's schema in `pg_stat_user_tables`). Never part of `npm test`; docs/performance.md (Scale-out) explains
 * the method and what the counts predict.
 *
 *   npm run bench:scale-out -- [--replicas 1,2,3] [--duration 10] [--connections 32] [--spend legacy|outbox]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { ReplicaCluster } from '../test/faults/support/replica-cluster.ts';
import { BENCH_MODEL, chatRequestBody } from './load/chat-request-body.ts';
import { availableClosedLoopTool, runClosedLoop } from './load/closed-loop.ts';
import { killAllNow, startServer, stopAll } from './run/child-processes.ts';
import { startPrivateRedis } from './servers/private-redis.ts';
import { GENEROUS_LIMITS } from './servers/switchboard-keys.ts';

interface Row {
  replicas: number;
  requestsPerSecond: number;
  served: number;
  failed: number;
  p50Ms: number | undefined;
  p99Ms: number | undefined;
  redisCommandsPerRequest: number;
  /** Commands sent by the replicas (network round trips, pipelines aside), the rest run inside scripts;
   * NaN when MONITOR saw too few to tell. */
  redisRoundTripsPerRequest: number;
  redisByCommand: Record<string, number>;
  rowWritesPerRequest: number;
  /** Redis server CPU per request, microseconds. */
  redisCpuMicrosPerRequest: number;
}

const { values } = parseArgs({
  options: {
    replicas: { type: 'string', default: '1,2,3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    spend: { type: 'string', default: 'legacy' },
  },
});
const replicaCounts = values.replicas.split(',').map(Number);
const durationSeconds = Number(values.duration);
const connections = Number(values.connections);
const spendMode = values.spend;
if (
  replicaCounts.some((n) => !Number.isInteger(n) || n < 1) ||
  !(durationSeconds > 0) ||
  !(connections > 0) ||
  !['legacy', 'outbox'].includes(spendMode)
) {
  process.stderr.write(
    'bench:scale-out: --replicas 1,2,3 --duration <s> --connections <n> --spend legacy|outbox\n',
  );
  process.exit(2);
}
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Calls per Redis command since the last CONFIG RESETSTAT. */
function redisCommandStats(port: number): Record<string, number> {
  const text = execFileSync('redis-cli', ['-p', String(port), 'INFO', 'commandstats'], { encoding: 'utf8' });
  const calls: Record<string, number> = {};
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2]);
  return calls;
}

/**
 * The share of Redis commands that replicas sent themselves rather than scripts ran: MONITOR for the
 * whole of `during` (the warm-up; a load generator can take seconds to start on a busy machine), where
 * a command run by a Lua script shows `[0 lua]` instead of a client address.
 */
async function clientCommandShare(port: number, during: Promise<unknown>): Promise<number> {
  const monitor = spawn('redis-cli', ['-p', String(port), 'MONITOR'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let text = '';
  monitor.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  await during;
  monitor.kill();
  let fromClients = 0;
  let fromScripts = 0;
  for (const line of text.split('\n')) {
    if (/^\d+\.\d+ \[\d+ lua\]/.test(line)) fromScripts++;
    else if (/^\d+\.\d+ \[\d+ [^\]]+\]/.test(line)) fromClients++;
  }
  // Too small a sample (the load stalled on a busy machine) says nothing: reported as unknown.
  return fromScripts >= 50 ? fromClients / (fromClients + fromScripts) : Number.NaN;
}

/** used_cpu_user + used_cpu_sys of the Redis server, in seconds. */
function redisCpuSeconds(port: number): number {
  const text = execFileSync('redis-cli', ['-p', String(port), 'INFO', 'cpu'], { encoding: 'utf8' });
  const read = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  return read('used_cpu_user') + read('used_cpu_sys');
}

/** Inserted + updated + deleted rows of every table in the schema, as the statistics collector has them. */
async function rowWrites(cluster: ReplicaCluster): Promise<number> {
  return cluster.count(
    `select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) as n from pg_stat_user_tables where schemaname = '${cluster.schema}'`,
  );
}

async function measure(replicas: number, upstreamPort: number, redisUrl: string, work: string) {
  const cluster = await ReplicaCluster.start({
    replicas,
    upstreamBaseUrl: `http://127.0.0.1:${upstreamPort}/v1`,
    modelName: BENCH_MODEL,
    redisUrl,
    generalSettings: `  spend_ingestion_mode: ${spendMode}\n`,
    haproxy: { logRequests: false },
  });
  try {
    const created = await cluster.adminOk('POST', '/ui/api/keys', { key_name: 'bench', ...GENEROUS_LIMITS });
    const load = {
      tool: availableClosedLoopTool(),
      url: `${cluster.url}/v1/chat/completions`,
      headers: { authorization: `Bearer ${created.key}` },
      body: chatRequestBody(false),
      connections,
      cpu: undefined,
      workDirectory: work,
    };
    const redisPort = Number(new URL(redisUrl).port);
    // Warm-up (JIT, pools, caches) under MONITOR: MONITOR costs Redis CPU, so it stays out of the
    // measured run; only the share of commands sent by the replicas is kept.
    const clientShare = await clientCommandShare(redisPort, runClosedLoop({ ...load, durationSeconds: 3 }));
    await delay(1_500); // let the warm-up's spend writes and statistics land
    execFileSync('redis-cli', ['-p', String(redisPort), 'CONFIG', 'RESETSTAT'], { stdio: 'ignore' });
    const rowsBefore = await rowWrites(cluster);
    const cpuBefore = redisCpuSeconds(redisPort);
    const result = await runClosedLoop({ ...load, durationSeconds });
    const redisCpu = redisCpuSeconds(redisPort) - cpuBefore;
    const redisCalls = redisCommandStats(redisPort);
    // Spend writes finish after the last answer, and PostgreSQL publishes table statistics about once
    // a second: wait until the row count stops moving.
    let rowsAfter = await rowWrites(cluster);
    for (let round = 0; round < 20; round++) {
      await delay(1_000);
      const now = await rowWrites(cluster);
      if (now === rowsAfter && round >= 1) break;
      rowsAfter = now;
    }
    const served = result.requests - result.non2xx;
    const perRequest = (n: number) => (served > 0 ? n / served : Number.NaN);
    const redisTotal = Object.values(redisCalls).reduce((sum, n) => sum + n, 0);
    return {
      replicas,
      requestsPerSecond: result.requestsPerSecond,
      served,
      failed: result.non2xx + result.errors,
      // The closed-loop tools report microseconds.
      p50Ms: result.latency ? result.latency.p50 / 1000 : undefined,
      p99Ms: result.latency ? result.latency.p99 / 1000 : undefined,
      redisCommandsPerRequest: perRequest(redisTotal),
      redisRoundTripsPerRequest: perRequest(redisTotal) * clientShare,
      redisCpuMicrosPerRequest: perRequest(redisCpu * 1e6),
      redisByCommand: Object.fromEntries(
        Object.entries(redisCalls).map(([name, n]) => [name, Number(perRequest(n).toFixed(3))]),
      ),
      rowWritesPerRequest: perRequest(rowsAfter - rowsBefore),
    } satisfies Row;
  } finally {
    await cluster.stop();
  }
}

function table(rows: Row[]): string {
  const base = rows[0]?.requestsPerSecond ?? 1;
  const lines = [
    '| replicas | req/s | × 1 replica | p50 ms | p99 ms | failed | Redis commands / req | of which sent by replicas | Redis CPU µs / req | DB row writes / req |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.replicas} | ${row.requestsPerSecond.toFixed(0)} | ${(row.requestsPerSecond / base).toFixed(2)} | ${row.p50Ms?.toFixed(1) ?? '–'} | ${row.p99Ms?.toFixed(1) ?? '–'} | ${row.failed} | ${row.redisCommandsPerRequest.toFixed(2)} | ${Number.isNaN(row.redisRoundTripsPerRequest) ? '–' : row.redisRoundTripsPerRequest.toFixed(2)} | ${row.redisCpuMicrosPerRequest.toFixed(0)} | ${row.rowWritesPerRequest.toFixed(2)} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'switchboard-bench-scale-out-'));
  const upstream = await startServer({
    name: 'raw upstream',
    command: process.execPath,
    args: [join(import.meta.dirname, 'servers/raw-upstream.ts'), '--chunks', '4', '--chunk-delay-ms', '0'],
    cpu: undefined,
  });
  const redis = await startPrivateRedis(undefined);
  const rows: Row[] = [];
  for (const replicas of replicaCounts) {
    log(`scale-out: ${replicas} replica(s), ${connections} connections, ${durationSeconds} s …`);
    const row = await measure(replicas, upstream.port, redis.url, work);
    rows.push(row);
    log(
      `  ${row.requestsPerSecond.toFixed(0)} req/s, ${row.redisCommandsPerRequest.toFixed(2)} Redis commands and ${row.rowWritesPerRequest.toFixed(2)} row writes per request`,
    );
  }
  const command = `npm run bench:scale-out -- --replicas ${values.replicas} --duration ${durationSeconds} --connections ${connections} --spend ${spendMode}`;
  const report = [
    `# Scale-out: ${new Date().toISOString()}`,
    '',
    `\`${command}\` (HAProxy round robin, spend ${spendMode}, upstream answering at once)`,
    '',
    table(rows),
    '',
    'Redis commands per request, by command:',
    '',
    ...rows.map((row) => `- ${row.replicas} replica(s): ${JSON.stringify(row.redisByCommand)}`),
    '',
  ].join('\n');
  const directory = join(import.meta.dirname, 'results');
  mkdirSync(directory, { recursive: true });
  const file = join(directory, `scale-out-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
  writeFileSync(file, report);
  process.stdout.write(report);
  log(`Written to ${file}.`);
  await stopAll();
}

process.on('exit', killAllNow);
main().catch(async (error: unknown) => {
  process.stderr.write(`bench:scale-out: failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  await stopAll();
  process.exit(1);
});
