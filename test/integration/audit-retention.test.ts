/**
 * Audit retention (general_settings.audit_retention_days): entries older than the retention are deleted
 * by a sweep at start and then hourly; null keeps them forever. Time is a manual clock, never a sleep.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config/load-config.ts';
import { AUDIT_RETENTION_INTERVAL_MS, AuditRetention } from '../../src/store/db/audit-retention.ts';
import { createDatabase, type Database } from '../../src/store/db/create-database.ts';
import { migrateToLatest } from '../../src/store/db/migrate.ts';
import { AuditRepository } from '../../src/store/db/repositories/audit-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';

const DAY_MS = 86_400_000;
const context = { actor: 'master', actorKeyId: null, requestId: 'req-retention' };

describe.each(await availableBackends())('audit retention on %s', (_name, makeBackend) => {
  let backend: Backend;
  let database: Database;

  beforeAll(async () => {
    backend = makeBackend();
    database = await createDatabase({
      url: backend.databaseUrl,
      poolSize: 2,
      ...(backend.schema ? { schema: backend.schema } : {}),
    });
    await migrateToLatest(database);
  });
  afterAll(async () => {
    await database?.close();
    await backend?.cleanup();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function appendAt(at: number, targetId: string): Promise<void> {
    const change = {
      action: 'team.create',
      targetType: 'team',
      targetId,
      organizationId: null,
      before: null,
      after: {},
    } as const;
    await new AuditRepository(database.db).append(context, change, at);
  }

  async function remaining(): Promise<string[]> {
    const rows = await database.db.selectFrom('audit_log').select('target_id').orderBy('target_id').execute();
    return rows.map((row) => row.target_id);
  }

  it('deletes the entries older than the retention and keeps the rest', async () => {
    const clock = new ManualClock();
    await appendAt(clock.now() - 31 * DAY_MS, 'old');
    await appendAt(clock.now() - 29 * DAY_MS, 'recent');
    await appendAt(clock.now(), 'now');
    const retention = new AuditRetention({ database, clock, retentionDays: 30, onError: () => {} });
    expect(await retention.sweep()).toBe(1);
    expect(await remaining()).toEqual(['now', 'recent']);
    clock.advance(2 * DAY_MS);
    expect(await retention.sweep()).toBe(1);
    expect(await remaining()).toEqual(['now']);
    const forever = new AuditRetention({
      database,
      clock: new ManualClock(Date.UTC(2100, 0, 1)),
      retentionDays: null,
      onError: () => {},
    });
    expect(await forever.sweep()).toBe(0);
    expect(await remaining()).toEqual(['now']);
  });

  it('sweeps at start and then every hour until stopped; null starts no timer', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const retention = new AuditRetention({
      database,
      clock: new ManualClock(),
      retentionDays: 365,
      onError: () => {},
    });
    const sweep = vi.spyOn(retention, 'sweep').mockResolvedValue(0);
    retention.start();
    expect(sweep).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(AUDIT_RETENTION_INTERVAL_MS);
    expect(sweep).toHaveBeenCalledTimes(2);
    retention.stop();
    vi.advanceTimersByTime(3 * AUDIT_RETENTION_INTERVAL_MS);
    expect(sweep).toHaveBeenCalledTimes(2);
    const forever = new AuditRetention({
      database,
      clock: new ManualClock(),
      retentionDays: null,
      onError: () => {},
    });
    const never = vi.spyOn(forever, 'sweep');
    forever.start();
    vi.advanceTimersByTime(AUDIT_RETENTION_INTERVAL_MS);
    expect(never).not.toHaveBeenCalled();
  });
});

describe('audit_retention_days', () => {
  const options = { path: undefined, env: {}, dataDir: '/nonexistent', source: 'test' };
  it('defaults to 365 days, accepts null for forever, and refuses zero', () => {
    expect(parseConfig('{}', options).general_settings.audit_retention_days).toBe(365);
    const forever = parseConfig('general_settings:\n  audit_retention_days: null\n', options);
    expect(forever.general_settings.audit_retention_days).toBeNull();
    expect(() => parseConfig('general_settings:\n  audit_retention_days: 0\n', options)).toThrow(
      /audit_retention_days/,
    );
  });
});
