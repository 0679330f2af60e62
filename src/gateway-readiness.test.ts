/**
 * Which readiness checks gate readiness in which mode (docs/operations.md, Health and readiness): the
 * database checks unless allow_requests_on_db_unavailable, Redis unless fail_open, the outbox's checks
 * in outbox mode whatever else is set (an answer needs its committed charge).
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from './config/load-config.ts';
import { readinessGates } from './gateway-readiness.ts';

function gatesOf(generalSettings: string) {
  const config = parseConfig(`general_settings:\n${generalSettings}`, {
    path: undefined,
    env: {},
    dataDir: '/tmp/unused',
    source: 'test',
  });
  return readinessGates(config);
}

describe('readiness gates by mode', () => {
  it('requires both database checks by default', () => {
    expect(gatesOf('  request_logging: true\n')).toEqual({
      required: ['database', 'foreground_database'],
      informational: [],
    });
  });

  it('reports the database checks without gating under allow_requests_on_db_unavailable', () => {
    expect(gatesOf('  allow_requests_on_db_unavailable: true\n')).toEqual({
      required: [],
      informational: ['database', 'foreground_database'],
    });
  });

  it('gates Redis under fail_closed only', () => {
    const redis = '  redis_url: redis://127.0.0.1:6379\n';
    expect(gatesOf(`${redis}  redis_degraded_mode: fail_closed\n`).required).toContain('redis');
    expect(gatesOf(`${redis}  redis_degraded_mode: fail_open\n`).informational).toEqual(['redis']);
  });

  it('keeps the outbox checks required in outbox mode, also under allow_requests_on_db_unavailable', () => {
    expect(gatesOf('  spend_ingestion_mode: outbox\n  allow_requests_on_db_unavailable: true\n')).toEqual({
      required: ['telemetry_database', 'telemetry_worker_database'],
      informational: ['database', 'foreground_database'],
    });
  });
});
