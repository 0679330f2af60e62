/**
 * The admin read side of spend (issue 12): GET /ui/api/spend/logs and /ui/api/spend/summary and the
 * `spend` totals on key, team and organization views, on SQLite and on PostgreSQL + Redis, over rows
 * inserted directly into spend_logs and spend_daily.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpendDailyTable, SpendLogsTable } from '../../src/store/db/tables.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const MINUTE = 60_000;

function logRow(index: number, overrides: Partial<SpendLogsTable>): SpendLogsTable {
  return {
    spend_id: `spend-${String(index).padStart(3, '0')}`,
    request_id: `req-${String(index).padStart(3, '0')}`,
    // Three rows share each timestamp, so pages must break ties by request id.
    created_at: NOW - Math.floor(index / 3) * MINUTE,
    key_id: null,
    user_id: null,
    team_id: null,
    organization_id: null,
    model: 'demo',
    model_group: 'demo',
    deployment_id: 'demo-fake',
    endpoint: '/v1/chat/completions',
    attempts: 1,
    stream: index % 2,
    status: 200,
    usage_known: 1,
    usage_estimated: 0,
    prompt_tokens: 10,
    completion_tokens: 5,
    reasoning_tokens: null,
    cached_tokens: null,
    cache_creation_tokens: null,
    total_tokens: 15,
    cost: 0.001,
    latency_ms: 120,
    ttft_ms: 40,
    cache_hit: 0,
    ...overrides,
  };
}

function dailyRow(
  day: string,
  scopeType: string,
  scopeId: string,
  model: string,
  cost: number,
  requests: number,
): SpendDailyTable {
  return {
    day,
    scope_type: scopeType,
    scope_id: scopeId,
    model,
    requests,
    failed_requests: 1,
    prompt_tokens: requests * 10,
    completion_tokens: requests * 5,
    total_tokens: requests * 15,
    unknown_usage_requests: 0,
    cost,
  };
}

describe.each(await availableBackends())('spend admin API on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let keyA: string;
  let keyB: string;
  let orgAdminKey: string;
  const logs: SpendLogsTable[] = [];

  async function get(path: string, bearer = gateway.masterKey) {
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend, clock: new ManualClock(NOW) });
    for (const org of ['org-a', 'org-b'])
      await gateway.admin('POST', '/ui/api/organizations', { organization_id: org });
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-a', organization_id: 'org-a' });
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-b', organization_id: 'org-b' });
    await gateway.admin('POST', '/ui/api/users', {
      user_id: 'admin-a',
      organization_id: 'org-a',
      role: 'org_admin',
    });
    keyA = (await gateway.admin('POST', '/ui/api/keys', { team_id: 'team-a' })).body.key_id;
    keyB = (await gateway.admin('POST', '/ui/api/keys', { team_id: 'team-b' })).body.key_id;
    orgAdminKey = await gateway.createKey({ user_id: 'admin-a' });

    for (let index = 0; index < 30; index++) {
      const a = index % 3 !== 2;
      logs.push(
        logRow(index, {
          key_id: a ? keyA : keyB,
          team_id: a ? 'team-a' : 'team-b',
          organization_id: a ? 'org-a' : 'org-b',
          model: index % 5 === 0 ? 'other' : 'demo',
          status: index % 7 === 0 ? 429 : 200,
          cost: index === 4 ? null : 0.001,
        }),
      );
    }
    const { db } = gateway.gateway.database;
    await db.insertInto('spend_logs').values(logs).execute();
    await db
      .insertInto('spend_daily')
      .values([
        dailyRow('2026-11-24', 'all', '', 'demo', 1.5, 10),
        dailyRow('2026-11-24', 'all', '', 'other', 0.25, 2),
        dailyRow('2026-11-01', 'all', '', 'demo', 2, 4),
        dailyRow('2026-09-01', 'all', '', 'demo', 5, 3),
        dailyRow('2026-11-24', 'key', keyA, 'demo', 1, 6),
        dailyRow('2026-09-01', 'key', keyA, 'demo', 4, 2),
        dailyRow('2026-11-24', 'key', keyB, 'demo', 0.5, 4),
        dailyRow('2026-11-24', 'team', 'team-a', 'demo', 1, 6),
        dailyRow('2026-11-24', 'team', 'team-b', 'demo', 0.5, 4),
        dailyRow('2026-11-24', 'organization', 'org-a', 'demo', 1, 6),
        dailyRow('2026-11-01', 'organization', 'org-a', 'other', 3, 1),
        dailyRow('2026-11-24', 'organization', 'org-b', 'demo', 0.5, 4),
      ])
      .execute();
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('lists logs newest first, ties broken by request id, as explicit objects', async () => {
    const { status, body } = await get('/ui/api/spend/logs?limit=5');
    expect(status).toBe(200);
    expect(body.data.map((row: any) => row.request_id)).toEqual([
      'req-002',
      'req-001',
      'req-000',
      'req-005',
      'req-004',
    ]);
    expect(body.data[0]).toMatchObject({
      created_at: '2026-11-24T12:00:00.000Z',
      stream: false,
      usage_known: true,
      cache_hit: false,
      prompt_tokens: 10,
      cost: 0.001,
      key_id: keyB,
    });
    expect(body.data.find((row: any) => row.request_id === 'req-004').cost).toBeNull();
    expect(typeof body.next_cursor).toBe('string');
  });

  it('walks every row exactly once across pages, stable under equal timestamps', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const { status, body } = await get(`/ui/api/spend/logs?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(status).toBe(200);
      seen.push(...body.data.map((row: any) => row.request_id));
      cursor = body.next_cursor;
    } while (cursor);
    const expected = [...logs]
      .sort((x, y) => y.created_at - x.created_at || (y.request_id < x.request_id ? -1 : 1))
      .map((row) => row.request_id);
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(30);
  });

  it('filters logs by key, team, organization, model, status and time range', async () => {
    const ids = async (query: string) =>
      (await get(`/ui/api/spend/logs?limit=500&${query}`)).body.data.map((row: any) => row.request_id).sort();
    const expected = (keep: (row: SpendLogsTable) => boolean) =>
      logs
        .filter(keep)
        .map((row) => row.request_id)
        .sort();
    expect(await ids(`key_id=${keyA}`)).toEqual(expected((row) => row.key_id === keyA));
    expect(await ids('team_id=team-b')).toEqual(expected((row) => row.team_id === 'team-b'));
    expect(await ids('organization_id=org-a&model=other')).toEqual(
      expected((row) => row.organization_id === 'org-a' && row.model === 'other'),
    );
    expect(await ids('status=429')).toEqual(expected((row) => row.status === 429));
    expect(await ids('status=failure')).toEqual(expected((row) => row.status === 429));
    expect(await ids('status=success')).toEqual(expected((row) => row.status === 200));
    const from = NOW - 3 * MINUTE;
    expect(await ids(`from=${new Date(from).toISOString()}&to=${NOW}`)).toEqual(
      expected((row) => row.created_at >= from && row.created_at < NOW),
    );
    expect(await ids('from=2026-11-24T11:58:00')).toEqual(
      expected((row) => row.created_at >= NOW - 2 * MINUTE),
    );
  });

  it('summarises by day (in day order) and by model, key, team and organization (by cost)', async () => {
    const byDay = await get('/ui/api/spend/summary?group_by=day&from=2026-11-01&to=2026-11-30');
    expect(byDay.status).toBe(200);
    expect(byDay.body.data).toEqual([
      {
        group: '2026-11-01',
        requests: 4,
        failed_requests: 1,
        prompt_tokens: 40,
        completion_tokens: 20,
        total_tokens: 60,
        unknown_usage_requests: 0,
        cost: 2,
      },
      {
        group: '2026-11-24',
        requests: 12,
        failed_requests: 2,
        prompt_tokens: 120,
        completion_tokens: 60,
        total_tokens: 180,
        unknown_usage_requests: 0,
        cost: 1.75,
      },
    ]);
    const byModel = await get('/ui/api/spend/summary?group_by=model');
    expect(byModel.body.data.map((row: any) => [row.group, row.cost, row.requests])).toEqual([
      ['demo', 8.5, 17],
      ['other', 0.25, 2],
    ]);
    const byKey = await get('/ui/api/spend/summary?group_by=key&from=2026-11-24&to=2026-11-24');
    expect(byKey.body.data.map((row: any) => [row.group, row.cost])).toEqual([
      [keyA, 1],
      [keyB, 0.5],
    ]);
    const byOrganization = await get('/ui/api/spend/summary?group_by=organization');
    expect(byOrganization.body.data.map((row: any) => [row.group, row.cost])).toEqual([
      ['org-a', 4],
      ['org-b', 0.5],
    ]);
    const oneTeamByDay = await get('/ui/api/spend/summary?group_by=day&team_id=team-b');
    expect(oneTeamByDay.body.data.map((row: any) => [row.group, row.requests])).toEqual([['2026-11-24', 4]]);
  });

  it('summarises keys within a team from the logs (the daily aggregates have no such grouping)', async () => {
    const { status, body } = await get('/ui/api/spend/summary?group_by=key&organization_id=org-a');
    expect(status).toBe(200);
    const rows = logs.filter((row) => row.key_id === keyA);
    expect(body.data).toEqual([
      {
        group: keyA,
        requests: rows.length,
        failed_requests: rows.filter((row) => row.status !== 200).length,
        prompt_tokens: rows.length * 10,
        completion_tokens: rows.length * 5,
        total_tokens: rows.length * 15,
        unknown_usage_requests: 0,
        cost: expect.closeTo(rows.filter((row) => row.cost !== null).length * 0.001, 9),
      },
    ]);
  });

  it('answers 400 naming the parameter for bad dates, group_by, limits, cursors, statuses and NUL characters', async () => {
    const cases: Array<[string, string]> = [
      ['/ui/api/spend/logs?from=yesterday', 'from'],
      ['/ui/api/spend/logs?to=2026-13-01', 'to'],
      ['/ui/api/spend/logs?from=2026-11-24&to=2026-11-01', 'to'],
      ['/ui/api/spend/logs?limit=0', 'limit'],
      ['/ui/api/spend/logs?limit=501', 'limit'],
      ['/ui/api/spend/logs?cursor=not-a-cursor', 'cursor'],
      ['/ui/api/spend/logs?status=teapot', 'status'],
      ['/ui/api/spend/logs?key_id=a%00b', 'key_id'],
      ['/ui/api/spend/summary?group_by=week', 'group_by'],
      ['/ui/api/spend/summary?from=2026-02-30', 'from'],
      ['/ui/api/spend/summary?to=1700000000000', 'to'],
      ['/ui/api/spend/summary?limit=1001', 'limit'],
      ['/ui/api/spend/summary?model=%00', 'model'],
    ];
    for (const [path, param] of cases) {
      const { status, body } = await get(path);
      expect(status, path).toBe(400);
      expect(body.error, path).toMatchObject({ type: 'invalid_request_error', param });
    }
  });

  it("keeps an organization administrator to their organization's rows", async () => {
    const logsOfA = await get('/ui/api/spend/logs?limit=500', orgAdminKey);
    expect(logsOfA.status).toBe(200);
    expect(new Set(logsOfA.body.data.map((row: any) => row.organization_id))).toEqual(new Set(['org-a']));
    expect(logsOfA.body.filters).toMatchObject({ organization_id: 'org-a' });
    const teams = await get('/ui/api/spend/summary?group_by=team', orgAdminKey);
    expect(teams.status).toBe(200);
    expect(teams.body.data.map((row: any) => row.group)).toEqual(['team-a']);
    const days = await get('/ui/api/spend/summary?group_by=day', orgAdminKey);
    expect(days.body.data.map((row: any) => [row.group, row.cost])).toEqual([
      ['2026-11-01', 3],
      ['2026-11-24', 1],
    ]);
    for (const query of ['organization_id=org-b', 'team_id=team-b', `key_id=${keyB}`]) {
      for (const path of ['/ui/api/spend/logs', '/ui/api/spend/summary']) {
        const { status, body } = await get(`${path}?${query}`, orgAdminKey);
        expect(status, `${path}?${query}`).toBe(403);
        expect(body.error.code).toBe('outside_admin_scope');
      }
    }
  });

  it('shows lifetime and last-30-days spend on key, team and organization views', async () => {
    const key = await get(`/ui/api/keys/${keyA}`);
    expect(key.body.spend).toEqual({ total_cost: 5, cost_30d: 1, requests: 8, requests_30d: 6 });
    const keys = await get('/ui/api/keys?team_id=team-b');
    expect(keys.body.data.map((row: any) => row.spend)).toEqual([
      { total_cost: 0.5, cost_30d: 0.5, requests: 4, requests_30d: 4 },
    ]);
    const teams = await get('/ui/api/teams');
    const teamSpend = Object.fromEntries(teams.body.data.map((row: any) => [row.team_id, row.spend]));
    expect(teamSpend['team-a']).toEqual({ total_cost: 1, cost_30d: 1, requests: 6, requests_30d: 6 });
    const organization = await get('/ui/api/organizations/org-a');
    expect(organization.body.spend).toEqual({ total_cost: 4, cost_30d: 4, requests: 7, requests_30d: 7 });
    await gateway.admin('POST', '/ui/api/organizations', { organization_id: 'org-idle' });
    expect((await get('/ui/api/organizations/org-idle')).body.spend).toEqual({
      total_cost: 0,
      cost_30d: 0,
      requests: 0,
      requests_30d: 0,
    });
  });
});
