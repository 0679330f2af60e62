/**
 * The database-deadline and outage settings (issue 31): their defaults, and hostile values refused
 * before anything starts, each naming its field.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { parseConfig } from './load-config.ts';

const base = { path: undefined, env: {}, dataDir: '/var/lib/switchboard', source: 'test' };

function issuesOf(general: string): readonly string[] {
  try {
    parseConfig(`general_settings:\n${general}`, base);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected the configuration to be rejected');
}

describe('database deadline and outage settings', () => {
  it('defaults: 30 s statements, 10 s migration lock waits, the spill in the data folder, outages not served', () => {
    const general = parseConfig('model_list: []\n', base).general_settings;
    expect({
      statement: general.database_statement_timeout_ms,
      lock: general.database_migration_lock_timeout_ms,
      spill: general.spend_spill_dir,
      allow: general.allow_requests_on_db_unavailable,
      stale: general.auth_cache_max_stale_seconds,
    }).toEqual({
      statement: 30_000,
      lock: 10_000,
      spill: '/var/lib/switchboard/spend-spill',
      allow: false,
      stale: 3_600,
    });
  });

  it.each([
    ['database_statement_timeout_ms: 0', 'general_settings.database_statement_timeout_ms'],
    ['database_statement_timeout_ms: 1.5e12', 'general_settings.database_statement_timeout_ms'],
    ['database_statement_timeout_ms: "30s"', 'general_settings.database_statement_timeout_ms'],
    ['database_migration_lock_timeout_ms: -1', 'general_settings.database_migration_lock_timeout_ms'],
    ['database_migration_lock_timeout_ms: 2.5', 'general_settings.database_migration_lock_timeout_ms'],
    ['allow_requests_on_db_unavailable: maybe', 'general_settings.allow_requests_on_db_unavailable'],
    ['auth_cache_max_stale_seconds: -5', 'general_settings.auth_cache_max_stale_seconds'],
    ['auth_cache_max_stale_seconds: 99999999', 'general_settings.auth_cache_max_stale_seconds'],
    ['spend_spill_dir: relative/spill', 'general_settings.spend_spill_dir'],
    ['spend_spill_dir: ""', 'general_settings.spend_spill_dir'],
    ['spend_spill_dir: "/var/lib/sb\\0/spill"', 'general_settings.spend_spill_dir'],
    ['spend_spill_dir: [/a]', 'general_settings.spend_spill_dir'],
  ])('refuses %s, naming the field', (line, field) => {
    const issues = issuesOf(`  ${line}\n`);
    expect(
      issues.some((issue) => issue.startsWith(`${field}:`)),
      issues.join('\n'),
    ).toBe(true);
  });
});
