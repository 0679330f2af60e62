/**
 * The API keys the benchmark drives Switchboard with, created through the admin API: one without
 * limits, and one whose organization, team, user and key all carry every window limit (generous, so
 * nothing is rejected) plus `max_parallel_requests`, to measure what admission costs (issue 4).
 */
import { BENCH_MODEL } from '../load/chat-request-body.ts';
import { BENCH_EMBEDDING_MODEL } from '../load/embedding-request-body.ts';

/** Far above anything a benchmark run sends, so the limited key is never rejected. */
export const GENEROUS_LIMITS = {
  rpm_limit: 100_000_000,
  tpm_limit: 100_000_000_000,
  rph_limit: 1_000_000_000,
  rpd_limit: 10_000_000_000,
  tpd_limit: 1_000_000_000_000,
} as const;

export interface BenchKeys {
  unlimitedKey: string;
  /** A key without limits whose answers go through the response cache (`cache_enabled: true`). */
  cachedKey: string;
  limitedKey: string | undefined;
  notes: string[];
}

export async function issueBenchKeys(
  baseUrl: string,
  masterKey: string,
  withLimited: boolean,
): Promise<BenchKeys> {
  const admin = async (path: string, body: object) => {
    const response = await fetch(`${baseUrl}/ui/api/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`POST /ui/api/${path} answered ${response.status}: ${text}`);
    return JSON.parse(text) as { key?: string };
  };
  const unlimited = await admin('keys', {
    key_name: 'bench-unlimited',
    models: [BENCH_MODEL, BENCH_EMBEDDING_MODEL],
  });
  const cached = await admin('keys', {
    key_name: 'bench-cached',
    models: [BENCH_MODEL, BENCH_EMBEDDING_MODEL],
    cache_enabled: true,
  });
  const keys: BenchKeys = {
    unlimitedKey: unlimited.key!,
    cachedKey: cached.key!,
    limitedKey: undefined,
    notes: [],
  };
  if (!withLimited) return keys;
  try {
    await admin('organizations', { organization_id: 'bench-org', ...GENEROUS_LIMITS });
    await admin('teams', { team_id: 'bench-team', organization_id: 'bench-org', ...GENEROUS_LIMITS });
    await admin('users', {
      user_id: 'bench-user',
      team_id: 'bench-team',
      organization_id: 'bench-org',
      ...GENEROUS_LIMITS,
    });
    const limited = await admin('keys', {
      key_name: 'bench-limited',
      models: [BENCH_MODEL, BENCH_EMBEDDING_MODEL],
      user_id: 'bench-user',
      team_id: 'bench-team',
      ...GENEROUS_LIMITS,
      max_parallel_requests: 100_000,
    });
    keys.limitedKey = limited.key;
  } catch (error) {
    keys.notes.push(
      `The limited key could not be set up, so switchboard-limited was skipped: ${String(error)}`,
    );
  }
  return keys;
}
