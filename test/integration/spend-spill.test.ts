/**
 * Legacy spend that the telemetry database does not take in time is spilled, not lost (issue 31): at
 * the shutdown deadline (a locked spend_logs), and past the in-memory retry buffer (a database that
 * refuses writes); the spill is written once the database answers. Only a spill folder that cannot be
 * written loses records, counted and logged with their number.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { LegacySpendWriter } from '../../src/accounting/legacy-spend-writer.ts';
import { SpendSpill } from '../../src/accounting/spend-spill.ts';
import { SpillReplay } from '../../src/accounting/spend-spill-replay.ts';
import type { SpendRecord } from '../../src/canonical/spend-record.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { Database } from '../../src/store/db/create-database.ts';
import { SpendRepository } from '../../src/store/db/repositories/spend-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import { type Backend, openBackendDatabase, postgresBackend, sqliteBackend } from '../support/backends.ts';
import { acceptInserts, refuseInserts } from '../support/database-outage.ts';
import { realBackendsAvailable, TEST_DATABASE_URL } from '../support/test-env.ts';

const record = (id: string): SpendRecord => ({
  spendId: `spend-${id}`,
  requestId: id,
  createdAt: Date.UTC(2026, 10, 25, 10, 0, 0),
  keyId: 'key-1',
  userId: null,
  teamId: null,
  organizationId: null,
  model: 'm',
  modelGroup: 'm',
  deploymentId: 'd',
  endpoint: '/v1/chat/completions',
  attempts: 1,
  stream: false,
  status: 200,
  usageKnown: true,
  promptTokens: 1,
  completionTokens: 1,
  reasoningTokens: 0,
  cachedTokens: 0,
  cacheCreationTokens: 0,
  totalTokens: 2,
  cost: 0.01,
  latencyMs: 5,
  ttftMs: null,
  cacheHit: false,
});

interface Rig {
  backend: Backend;
  database: Database;
  repository: SpendRepository;
  spill: SpendSpill;
  metrics: ReturnType<typeof createMetrics>;
  logs: Array<{ level: number; msg: string; records?: number }>;
  logger: pino.Logger;
  folder: string;
}

const rigs: Rig[] = [];

async function rig(backend: Backend, spillDir?: string): Promise<Rig> {
  const database = await openBackendDatabase(backend);
  const repository = new SpendRepository(database.db, database.dialect);
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-spill-'));
  const logs: Rig['logs'] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  });
  const made: Rig = {
    backend,
    database,
    repository,
    spill: new SpendSpill(spillDir ?? join(folder, 'spill'), await repository.databaseId()),
    metrics: createMetrics({ collectProcessMetrics: false }),
    logs,
    logger: pino({ level: 'info' }, sink),
    folder,
  };
  rigs.push(made);
  return made;
}

async function rows(database: Database): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from spend_logs`.execute(database.db);
  return Number(rows[0]!.n);
}

async function metric(r: Rig, outcome: string): Promise<number> {
  const { values } = await r.metrics.accountingWrites.get();
  return values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.database.close();
    await r.backend.cleanup();
    rmSync(r.folder, { recursive: true, force: true });
  }
});

describe.runIf(await realBackendsAvailable())('spilling at the shutdown deadline (PostgreSQL)', () => {
  it('spills what a locked spend_logs did not take by the deadline, and writes it once the table is free', async () => {
    const r = await rig(postgresBackend());
    const writer = new LegacySpendWriter({ ...r, clock: systemClock, spill: r.spill });
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    let released = false;
    try {
      await holder.query('begin');
      await holder.query(`lock table "${r.backend.schema}".spend_logs in access exclusive mode`);
      const writes = ['a', 'b', 'c'].map((id) => writer.write(record(id)));
      await writer.close(Date.now() + 300);
      await Promise.all(writes);
      expect(released, 'close returned while spend_logs was still locked').toBe(false);
      expect(readdirSync(r.spill.dir).filter((name) => name.endsWith('.jsonl'))).toHaveLength(1);
      expect(await metric(r, 'spilled')).toBe(3);
      expect(r.logs.map((line) => line.msg)).toContain(
        'spend records not written by the shutdown deadline: spilled to a local file; they are written when the database answers (next start at the latest)',
      );
    } finally {
      await holder.query('rollback');
      released = true;
      await holder.end();
    }
    const replay = new SpillReplay({ ...r, mode: 'legacy' });
    replay.nudge();
    await replay.settled();
    expect(await rows(r.database)).toBe(3);
    expect(readdirSync(r.spill.dir)).toEqual([]);
  });
});

describe.each(await availableBackends())('spilling past the retry buffer on %s', (_name, makeBackend) => {
  it('spills records past the in-memory buffer instead of dropping them, and writes all of them when the database answers', async () => {
    const r = await rig(makeBackend());
    const postgres = r.database.dialect === 'postgres';
    const replay = new SpillReplay({ ...r, mode: 'legacy' });
    const writer = new LegacySpendWriter({
      ...r,
      clock: systemClock,
      spill: r.spill,
      maxRetained: 2,
      onSpilled: () => replay.nudge(),
    });
    await refuseInserts(r.database.db, postgres, 'spend_logs');
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => writer.write(record(id))));
    expect(writer.retainedCount).toBe(2);
    expect(await metric(r, 'spilled')).toBe(3);
    expect(await metric(r, 'dropped')).toBe(0);
    await acceptInserts(r.database.db, postgres, 'spend_logs');
    replay.nudge();
    await replay.settled();
    for (let waited = 0; writer.retainedCount > 0 && waited < 20_000; waited += 100) await delay(100);
    expect(await rows(r.database)).toBe(5);
    await writer.close();
  });
});

describe('when the spill folder cannot take the records', () => {
  it('counts them as lost, with an error naming how many', async () => {
    const r = await rig(sqliteBackend());
    const blocker = join(r.folder, 'blocker');
    writeFileSync(blocker, '');
    const writer = new LegacySpendWriter({
      ...r,
      clock: systemClock,
      spill: new SpendSpill(join(blocker, 'spill'), 'db'),
    });
    await refuseInserts(r.database.db, false, 'spend_logs');
    await Promise.all(['a', 'b'].map((id) => writer.write(record(id))));
    await writer.close(Date.now() + 100);
    expect(await metric(r, 'dropped')).toBe(2);
    const lost = r.logs.find((line) => line.level === 50);
    expect(lost?.msg).toMatch(/^2 spend records lost: not written by the shutdown deadline/);
    expect(lost?.records).toBe(2);
  });
});

describe('a record that arrives after the shutdown flush', () => {
  // A stream the shutdown cut settles when its socket closes, which can come after the flush: its
  // record must be spilled for the next start, not handed to a closing database and forgotten.
  it('is spilled and written by the next start, not lost', async () => {
    const r = await rig(sqliteBackend());
    const writer = new LegacySpendWriter({ ...r, clock: systemClock, spill: r.spill });
    await writer.close(Date.now() + 100);
    await writer.write(record('late'));
    expect(await metric(r, 'spilled')).toBe(1);
    expect(await rows(r.database)).toBe(0);
    const replay = new SpillReplay({ ...r, mode: 'legacy' });
    replay.nudge();
    await replay.settled();
    expect(await rows(r.database)).toBe(1);
  });
});
