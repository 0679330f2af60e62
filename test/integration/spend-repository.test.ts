/**
 * The spend repository's exactly-once rules (issue 12), on SQLite and PostgreSQL: a record written
 * twice (a retried batch, a second replica) is one row and counts once in the daily aggregates; two
 * settlement workers draining one outbox at the same time move each charge once; and a settlement
 * worker that stops completing rounds fails readiness.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxSettler } from '../../src/accounting/outbox-settler.ts';
import type { SpendRecord } from '../../src/canonical/spend-record.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { createDatabase, type Database } from '../../src/store/db/create-database.ts';
import { migrateToLatest } from '../../src/store/db/migrate.ts';
import { SpendRepository } from '../../src/store/db/repositories/spend-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';

const record = (requestId: string, overrides: Partial<SpendRecord> = {}): SpendRecord => ({
  spendId: `spend-${requestId}`,
  requestId,
  createdAt: Date.UTC(2026, 10, 25, 10, 0, 0),
  keyId: 'key-1',
  userId: null,
  teamId: 'team-1',
  organizationId: null,
  model: 'm',
  modelGroup: 'm',
  deploymentId: 'd',
  endpoint: '/v1/chat/completions',
  attempts: 1,
  stream: false,
  status: 200,
  usageKnown: true,
  promptTokens: 10,
  completionTokens: 5,
  reasoningTokens: 0,
  cachedTokens: 0,
  cacheCreationTokens: 0,
  totalTokens: 15,
  cost: 0.25,
  latencyMs: 12,
  ttftMs: null,
  cacheHit: false,
  ...overrides,
});

describe.each(await availableBackends())('spend repository on %s', (_name, makeBackend) => {
  let backend: Backend;
  let database: Database;
  let repository: SpendRepository;

  beforeAll(async () => {
    backend = makeBackend();
    const config = parseConfig(`general_settings:\n${backend.generalSettingsYaml}`, {
      path: undefined,
      env: {},
      dataDir: '/nonexistent',
      source: 'test',
    });
    database = await createDatabase({
      url: config.general_settings.database_url,
      poolSize: 4,
      ...(backend.schema ? { schema: backend.schema } : {}),
    });
    if (backend.schema) {
      const { sql } = await import('kysely');
      await sql.raw(`create schema if not exists "${backend.schema}"`).execute(database.db);
    }
    await migrateToLatest(database);
    repository = new SpendRepository(database.db, database.dialect);
  });
  afterAll(async () => {
    await database?.close();
    await backend?.cleanup();
  });

  const daily = async (scopeType: string) =>
    (await database.db
      .selectFrom('spend_daily')
      .selectAll()
      .where('scope_type', '=', scopeType)
      .execute()) as Array<{
      requests: number | string;
      cost: number | string;
      total_tokens: number | string;
    }>;

  it('writes a record once however often it is written, and aggregates it once per scope', async () => {
    expect(await repository.record([record('r1'), record('r1')])).toBe(1);
    expect(
      await repository.record([record('r1'), record('r2', { status: 502, cost: null, usageKnown: false })]),
    ).toBe(1);
    const rows = await database.db
      .selectFrom('spend_logs')
      .select('request_id')
      .orderBy('request_id')
      .execute();
    expect(rows.map((row) => row.request_id)).toEqual(['r1', 'r2']);
    const [all] = await daily('all');
    expect(Number(all!.requests)).toBe(2);
    expect(Number(all!.cost)).toBeCloseTo(0.25, 12);
    expect(Number(all!.total_tokens)).toBe(30);
    expect((await daily('team')).map((row) => Number(row.requests))).toEqual([2]);
    expect(await daily('user')).toEqual([]);
  });

  it('moves every outbox charge into spend exactly once when two workers drain it together', async () => {
    const charges = Array.from({ length: 300 }, (_, index) => record(`o${index}`, { keyId: 'key-o' }));
    await repository.enqueue(charges, Date.now());
    await repository.enqueue(charges.slice(0, 10), Date.now()); // a charge accepted twice stays one row
    const other = new SpendRepository(database.db, database.dialect);
    const drained = async (repo: SpendRepository) => {
      let moved = 0;
      for (let batch = await repo.settleOutbox(40); batch > 0; batch = await repo.settleOutbox(40))
        moved += batch;
      return moved;
    };
    const [first, second] = await Promise.all([drained(repository), drained(other)]);
    expect(first + second).toBe(300);
    const [key] = await daily('key').then((rows) => rows.filter((row) => (row as any).scope_id === 'key-o'));
    expect(Number(key!.requests)).toBe(300);
    expect((await repository.outboxBacklog()).pending).toBe(0);
  });

  it('reports a settlement worker that completed no round recently as not fresh (readiness 503)', async () => {
    const clock = new ManualClock();
    const settler = new OutboxSettler({
      repository,
      clock,
      logger: pino({ level: 'silent' }),
      metrics: createMetrics({ collectProcessMetrics: false }),
      idleMs: 10,
      staleAfterMs: 1_000,
    });
    expect(() => settler.checkFresh()).toThrow(/has not completed a round/);
    settler.start();
    // Polls for the first completed round; the deadline only guards a round that never completes.
    for (const deadline = performance.now() + 10_000; performance.now() < deadline; ) {
      try {
        settler.checkFresh();
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    expect(() => settler.checkFresh()).not.toThrow();
    await settler.stop();
    clock.advance(1_001);
    expect(() => settler.checkFresh()).toThrow(/has not completed a round in 1000 ms/);
  });
});
