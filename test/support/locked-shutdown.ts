/**
 * A real gateway process (legacy spend, PostgreSQL in a schema of its own) stopped with SIGTERM while a
 * second connection holds `spend_logs` in ACCESS EXCLUSIVE mode (issue 31), then started again after
 * the lock is gone. Returns what happened, for the main suite (order of events) and the fault suite
 * (the measured exit time). The lock is released only after the process exited, or when it gave up.
 */

import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { dropSchema } from './backends.ts';
import { type SpawnedGateway, spawnGateway } from './spawn-gateway.ts';
import { TEST_DATABASE_URL } from './test-env.ts';
import { uniqueName } from './unique-name.ts';

const MASTER_KEY = 'sk-master-locked-shutdown';

export interface LockedShutdown {
  /** Requests answered 200 while spend_logs was locked (their spend could not be written then). */
  served: number;
  exitCode: number | null;
  /** Milliseconds from SIGTERM to the process's exit; null when it had not exited by `giveUpMs`. */
  exitMs: number | null;
  /** True when the process exited while the lock was still held. */
  exitedUnderLock: boolean;
  /** The stopped process's output (JSON log lines). */
  output: string;
  /** Spill files left after the stop, with their modes. */
  spill: Array<{ name: string; mode: number }>;
  spillFolderMode: number | null;
  /** spend_logs rows of the served requests once the restarted process replayed the spill. */
  rowsAfterRestart: number;
  restartOutput: string;
}

export async function runLockedShutdown(options: {
  graceSeconds: number;
  giveUpMs: number;
}): Promise<LockedShutdown> {
  const schema = uniqueName('t');
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-locked-'));
  const spillDir = join(folder, 'spill');
  const config = join(folder, 'switchboard.yaml');
  const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  writeFileSync(
    config,
    `model_list:\n  - model_name: demo\n    params: { provider: fake, model: demo }\ngeneral_settings:\n  master_key: ${MASTER_KEY}\n  database_url: ${JSON.stringify(url)}\n  spend_ingestion_mode: legacy\n  shutdown_grace_seconds: ${options.graceSeconds}\n  spend_spill_dir: ${JSON.stringify(spillDir)}\n`,
    { mode: 0o600 },
  );
  const env = { LOG_LEVEL: 'info' };
  const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
  let gateway: SpawnedGateway | undefined;
  try {
    await holder.connect();
    await holder.query(`create schema "${schema}"`);
    gateway = await spawnGateway(['--config', config], env);
    const key = await createKey(gateway.baseUrl);
    const warmUp = await chat(gateway.baseUrl, key);
    if (warmUp !== 200) throw new Error(`the warm-up request answered ${warmUp}`);
    await waitFor(async () => (await spendRows(holder, schema)) === 1, 10_000, 'the warm-up spend row');
    await holder.query('begin');
    await holder.query(`lock table "${schema}".spend_logs in access exclusive mode`);
    const answers = await Promise.all(Array.from({ length: 5 }, () => chat(gateway!.baseUrl, key)));
    const served = answers.filter((status) => status === 200).length;
    const stopped = stopWithin(gateway, options.giveUpMs);
    const exit = await stopped;
    const exitedUnderLock = exit.code !== undefined;
    await holder.query('rollback');
    if (exit.code === undefined) await gateway.stop('SIGKILL');
    const spill = listSpill(spillDir);
    const spillFolderMode = spill === undefined ? null : statSync(spillDir).mode & 0o777;
    const output = gateway.output();
    gateway = await spawnGateway(['--config', config], env);
    const expected = served + 1;
    await waitFor(
      async () => (await spendRows(holder, schema)) >= expected,
      20_000,
      'the replayed spend rows',
    );
    return {
      served,
      exitCode: exit.code ?? null,
      exitMs: exit.ms,
      exitedUnderLock,
      output,
      spill: spill ?? [],
      spillFolderMode,
      rowsAfterRestart: (await spendRows(holder, schema)) - 1,
      restartOutput: gateway.output(),
    };
  } finally {
    await gateway?.stop('SIGKILL');
    await holder.query('rollback').catch(() => {});
    await holder.end().catch(() => {});
    await dropSchema(schema);
    rmSync(folder, { recursive: true, force: true });
  }
}

/** SIGTERM, then the exit code and time, or `code: undefined` when it had not exited by `giveUpMs`. */
async function stopWithin(
  gateway: SpawnedGateway,
  giveUpMs: number,
): Promise<{ code: number | null | undefined; ms: number | null }> {
  const started = performance.now();
  const exited = once(gateway.child, 'exit').then(([code]) => code as number | null);
  gateway.child.kill('SIGTERM');
  const outcome = await Promise.race([exited, delay(giveUpMs).then(() => 'late' as const)]);
  if (outcome === 'late') return { code: undefined, ms: null };
  return { code: outcome, ms: Math.round(performance.now() - started) };
}

function listSpill(dir: string): Array<{ name: string; mode: number }> | undefined {
  try {
    return readdirSync(dir).map((name) => ({ name, mode: statSync(join(dir, name)).mode & 0o777 }));
  } catch {
    return undefined;
  }
}

async function spendRows(client: pg.Client, schema: string): Promise<number> {
  const { rows } = await client.query(`select count(*)::int as n from "${schema}".spend_logs`);
  return rows[0].n;
}

async function waitFor(condition: () => Promise<boolean>, withinMs: number, what: string): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await condition().catch(() => false))) {
    if (performance.now() > deadline) throw new Error(`${what}: not seen within ${withinMs} ms`);
    await delay(100);
  }
}

async function createKey(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/ui/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ key_name: uniqueName('k') }),
  });
  if (response.status !== 201) throw new Error(`key creation answered ${response.status}`);
  return ((await response.json()) as { key: string }).key;
}

async function chat(baseUrl: string, key: string): Promise<number> {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await response.arrayBuffer();
  return response.status;
}
