/**
 * GET /ui/api/console/overview (issue 17) on SQLite and on PostgreSQL + Redis: buckets aligned to
 * their size and zero-filled, errors, tokens (null as 0), spend, latency percentiles from the SQL
 * histogram (within a bin's ~10 %), fallbacks, the top five models, keys and teams with their names,
 * an organization administrator narrowed to their organization, `window` validated; and refusals of
 * identity rate limits and budgets counted from real 429s across the shared store, per organization,
 * with an admitted request counting nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpendLogsTable } from '../../src/store/db/tables.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const NOW = Date.parse('2026-11-24T12:00:30Z');
const MINUTE = 60_000;
/** The 1h window's first bucket: minutes are aligned, the 60th holds now. */
const FROM = Date.parse('2026-11-24T11:01:00Z');

let sequence = 0;
function row(createdAt: number, overrides: Partial<SpendLogsTable>): SpendLogsTable {
  sequence++;
  return {
    spend_id: `spend-${sequence}`,
    request_id: `req-${sequence}`,
    created_at: createdAt,
    key_id: null,
    user_id: null,
    team_id: null,
    organization_id: 'org-b',
    model: 'demo',
    // The group that answered is the model asked for unless a test says otherwise.
    model_group: overrides.model ?? 'demo',
    deployment_id: 'demo-fake',
    endpoint: '/v1/chat/completions',
    attempts: 1,
    stream: 0,
    status: 200,
    usage_known: 1,
    usage_estimated: 0,
    prompt_tokens: null,
    completion_tokens: null,
    reasoning_tokens: null,
    cached_tokens: null,
    cache_creation_tokens: null,
    total_tokens: null,
    cost: null,
    latency_ms: 5000,
    ttft_ms: null,
    cache_hit: 0,
    ...overrides,
  };
}

function expectNear(actual: number | null, expected: number): void {
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - expected) / expected).toBeLessThanOrEqual(0.1);
}

describe.each(await availableBackends())('the console overview on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let keyA: string;
  let keyB: string;
  let orgAdminA: string;

  async function overview(query = '', bearer = gateway.masterKey) {
    const response = await fetch(`${gateway.baseUrl}/ui/api/console/overview${query}`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend, clock: new ManualClock(NOW) });
    for (const org of ['org-a', 'org-b'])
      await gateway.admin('POST', '/ui/api/organizations', { organization_id: org });
    await gateway.admin('POST', '/ui/api/teams', {
      team_id: 'team-a',
      team_alias: 'Alpha',
      organization_id: 'org-a',
    });
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-b', organization_id: 'org-b' });
    await gateway.admin('POST', '/ui/api/users', {
      user_id: 'admin-a',
      organization_id: 'org-a',
      role: 'org_admin',
    });
    keyA = (await gateway.admin('POST', '/ui/api/keys', { team_id: 'team-a', key_name: 'Alpha key' })).body
      .key_id;
    keyB = (await gateway.admin('POST', '/ui/api/keys', { team_id: 'team-b' })).body.key_id;
    orgAdminA = await gateway.createKey({ user_id: 'admin-a' });

    const rows: SpendLogsTable[] = [];
    // Minute 29: 100 successful requests of organization A with latencies 1..100 ms.
    for (let latency = 1; latency <= 100; latency++)
      rows.push(
        row(FROM + 29 * MINUTE + latency * 100, {
          key_id: keyA,
          team_id: 'team-a',
          organization_id: 'org-a',
          latency_ms: latency,
          prompt_tokens: 10,
          completion_tokens: 5,
          total_tokens: 15,
          cost: 0.01,
        }),
      );
    // Minute 59 (the current one): 10 requests of organization B, 3 failed, 5 without prompt tokens.
    for (let index = 0; index < 10; index++)
      rows.push(
        row(FROM + 59 * MINUTE + index * 1000, {
          key_id: keyB,
          team_id: 'team-b',
          model: 'other',
          model_group: 'other',
          status: index < 3 ? 500 : 200,
          latency_ms: 1000,
          prompt_tokens: index < 5 ? null : 20,
          completion_tokens: 10,
          total_tokens: 30,
          cost: 0.05,
        }),
      );
    // Two retried requests (fallbacks), still organization B's "other" model, unpriced.
    for (let index = 0; index < 2; index++)
      rows.push(
        row(FROM + 59 * MINUTE + 20_000, {
          key_id: keyB,
          team_id: 'team-b',
          model: 'other',
          model_group: 'other',
          attempts: 2,
          latency_ms: 1000,
        }),
      );
    // Minute 10: a group fallback (alias answered by demo) of a since-deleted key, a wildcard group
    // serving its own name (no fallback), and two cheap models that tie on spend.
    rows.push(
      row(FROM + 10 * MINUTE, { model: 'alias', model_group: 'demo', key_id: 'key-gone', cost: 0.02 }),
    );
    rows.push(row(FROM + 10 * MINUTE, { model: 'openai/gpt-4o', model_group: 'openai/*', cost: 0.01 }));
    for (let index = 0; index < 3; index++) rows.push(row(FROM + 10 * MINUTE, { model: 'cheap-many' }));
    rows.push(row(FROM + 10 * MINUTE, { model: 'cheap-few', cost: 0 }));
    // Just before the window: not counted.
    rows.push(row(FROM - 1, { organization_id: 'org-a', cost: 9, team_id: 'team-a' }));
    await gateway.gateway.database.db.insertInto('spend_logs').values(rows).execute();
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('has every aligned bucket of the window, zero-filled, and counts requests, errors, tokens and spend', async () => {
    const { status, body } = await overview('?window=1h');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      window: '1h',
      organization_id: null,
      from: new Date(FROM).toISOString(),
      to: new Date(NOW).toISOString(),
      bucket_seconds: 60,
    });
    expect(body.series).toHaveLength(60);
    expect(body.series.map((bucket: any) => bucket.start)).toEqual(
      Array.from({ length: 60 }, (_, index) => new Date(FROM + index * MINUTE).toISOString()),
    );
    const busy = new Map([
      [10, 6],
      [29, 100],
      [59, 12],
    ]);
    body.series.forEach((bucket: any, index: number) => {
      expect(bucket.requests, `bucket ${index}`).toBe(busy.get(index) ?? 0);
      if (!busy.has(index))
        expect(bucket).toMatchObject({ errors: 0, spend: 0, latency_p50_ms: null, latency_p99_ms: null });
    });
    expect(body.series[59]).toMatchObject({ errors: 3, prompt_tokens: 100, completion_tokens: 100 });
    expect(body.series[59].spend).toBeCloseTo(0.5, 9);
    expect(body.totals).toMatchObject({
      requests: 118,
      errors: 3,
      prompt_tokens: 1100,
      completion_tokens: 600,
      total_tokens: 1700,
      fallbacks: 3,
    });
    expect(body.totals.spend).toBeCloseTo(1.53, 9);
  });

  it('computes latency percentiles per bucket and overall within a bin of the true value', async () => {
    const { body } = await overview('?window=1h');
    expectNear(body.series[29].latency_p50_ms, 50.5);
    expectNear(body.series[29].latency_p99_ms, 99);
    expectNear(body.series[59].latency_p50_ms, 1000);
    // 118 requests: 100 of 1..100 ms, 12 of 1 s, 6 of 5 s.
    expectNear(body.totals.latency_p50_ms, 59);
    expectNear(body.totals.latency_p99_ms, 5000);
  });

  it('lists the top five models, keys and teams by spend, then requests, with names (null once deleted)', async () => {
    const { body } = await overview('?window=1h');
    expect(body.top_models.map((entry: any) => entry.model)).toEqual([
      'demo',
      'other',
      'alias',
      'openai/gpt-4o',
      'cheap-many',
    ]);
    expect(body.top_models[0]).toMatchObject({ requests: 100, total_tokens: 1500 });
    expect(body.top_keys).toMatchObject([
      { key_id: keyA, key_name: 'Alpha key', requests: 100 },
      { key_id: keyB, key_name: null, requests: 12 },
      { key_id: 'key-gone', key_name: null, requests: 1 },
    ]);
    expect(body.top_teams).toMatchObject([
      { team_id: 'team-a', team_alias: 'Alpha', requests: 100 },
      { team_id: 'team-b', team_alias: null, requests: 12 },
    ]);
    expect(body.top_teams[0].spend).toBeCloseTo(1, 9);
  });

  it("narrows an organization administrator to their organization's records", async () => {
    const { status, body } = await overview('?window=1h', orgAdminA);
    expect(status).toBe(200);
    expect(body.organization_id).toBe('org-a');
    expect(body.totals).toMatchObject({ requests: 100, errors: 0, fallbacks: 0 });
    expect(body.top_keys.map((entry: any) => entry.key_id)).toEqual([keyA]);
    expect(body.top_teams.map((entry: any) => entry.team_id)).toEqual(['team-a']);
    expect(JSON.stringify(body)).not.toMatch(/team-b|org-b|other/);
    const other = await overview('?window=1h&organization_id=org-b', orgAdminA);
    expect(other.status).toBe(403);
    // A proxy administrator may narrow to any organization.
    const narrowed = await overview('?window=1h&organization_id=org-b');
    expect(narrowed.body.totals.requests).toBe(18);
  });

  it('aligns each window to its bucket size: 24h hourly, 7d six-hourly, 30d daily (24h by default)', async () => {
    const expected = {
      '24h': [24, 3600, '2026-11-23T13:00:00.000Z'],
      '7d': [28, 21_600, '2026-11-17T18:00:00.000Z'],
      '30d': [30, 86_400, '2026-10-26T00:00:00.000Z'],
    } as const;
    for (const [window, [count, seconds, first]] of Object.entries(expected)) {
      const { body } = await overview(`?window=${window}`);
      expect(body.series, window).toHaveLength(count);
      expect(body.bucket_seconds, window).toBe(seconds);
      expect(body.from, window).toBe(first);
      expect(body.totals.requests, window).toBe(119);
    }
    expect((await overview('')).body.window).toBe('24h');
  });

  it('refuses an unknown window with 400 naming window', async () => {
    for (const window of ['2h', '__proto__', 'constructor', '']) {
      const { status, body } = await overview(`?window=${window}`);
      expect(status, window).toBe(400);
      expect(body.error.param, window).toBe('window');
    }
  });
});

describe.each(await availableBackends())('refusals on the console overview on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  const clock = new ManualClock(NOW);

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend, clock });
    for (const org of ['org-a', 'org-b'])
      await gateway.admin('POST', '/ui/api/organizations', { organization_id: org });
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-a', organization_id: 'org-a' });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const chat = (key: string) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
    });
  const rejections = async (query = '') =>
    (await gateway.admin('GET', `/ui/api/console/overview${query}`)).body.rejections;

  it('counts nothing for an admitted request, then each real rate-limit and budget 429, per minute and organization', async () => {
    const limited = await gateway.createKey({ team_id: 'team-a', rpm_limit: 1 });
    expect((await chat(limited)).status).toBe(200);
    const before = await rejections();
    expect(before).toMatchObject({ window_seconds: 3600, rate_limit: 0, budget: 0 });
    expect(before.series).toHaveLength(60);

    const refused = await chat(limited);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as any).error.code).toBe('key_rpm_exceeded');
    const broke = await gateway.createKey({ max_budget: 0, budget_duration: '1d' });
    const overBudget = await chat(broke);
    expect(overBudget.status).toBe(429);
    expect(((await overBudget.json()) as any).error.code).toBe('key_budget_exceeded');

    // The counters are written without holding the answer: read until they land (no clock involved).
    await expect.poll(async () => (await rejections()).budget).toBe(1);
    const after = await rejections();
    expect(after).toMatchObject({ rate_limit: 1, budget: 1 });
    expect(after.series[59]).toEqual({ start: '2026-11-24T12:00:00.000Z', rate_limit: 1, budget: 1 });
    expect(after.series.slice(0, 59).every((entry: any) => entry.rate_limit + entry.budget === 0)).toBe(true);
    // The rate-limited key is organization A's; the over-budget key belongs to none.
    expect(await rejections('?organization_id=org-a')).toMatchObject({ rate_limit: 1, budget: 0 });
    expect(await rejections('?organization_id=org-b')).toMatchObject({ rate_limit: 0, budget: 0 });

    // An hour later the minute has left the window.
    clock.advance(60 * MINUTE);
    expect(await rejections()).toMatchObject({ rate_limit: 0, budget: 0 });
  });
});
