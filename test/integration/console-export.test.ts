/**
 * CSV exports (issue 17): GET /ui/api/spend/logs/export and /ui/api/audit/export on SQLite and on
 * PostgreSQL + Redis: RFC 4180 quoting that a parser reads back, the formula-injection guard, the
 * list routes' filters (a bad one a 400 naming it), organization administrators narrowed to their
 * organization, paging past one page of the cursor, and the 100,000-row cap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_ROW_CAP } from '../../src/http/routes/export-routes.ts';
import type { SpendLogsTable } from '../../src/store/db/tables.ts';
import { availableBackends } from '../support/available-backends.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const NOW = Date.parse('2026-11-24T12:00:00Z');

/** An RFC 4180 reader: quoted fields may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (quoted && char === '"' && text[index + 1] === '"') {
      field += '"';
      index++;
    } else if (quoted && char === '"') quoted = false;
    else if (quoted) field += char;
    else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      index++;
    } else field += char;
  }
  expect(field).toBe('');
  return records;
}

function spendRow(index: number, overrides: Partial<SpendLogsTable> = {}): SpendLogsTable {
  return {
    spend_id: `spend-${String(index).padStart(6, '0')}`,
    request_id: `req-${String(index).padStart(6, '0')}`,
    created_at: NOW - index * 1000,
    key_id: null,
    user_id: null,
    team_id: 'team-b',
    organization_id: 'org-b',
    model: 'demo',
    model_group: 'demo',
    deployment_id: 'demo-fake',
    endpoint: '/v1/chat/completions',
    attempts: 1,
    stream: 0,
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
    latency_ms: 100,
    ttft_ms: null,
    cache_hit: 0,
    ...overrides,
  };
}

async function insertSpend(gateway: TestGateway, rows: SpendLogsTable[]): Promise<void> {
  const { db } = gateway.gateway.database;
  for (let start = 0; start < rows.length; start += 1000)
    await db
      .insertInto('spend_logs')
      .values(rows.slice(start, start + 1000))
      .execute();
}

describe.each(await availableBackends())('CSV exports on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let orgAdmin: string;

  async function download(path: string, bearer = gateway.masterKey) {
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    const text = await response.text();
    return { response, status: response.status, text };
  }

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend, clock: new ManualClock(NOW) });
    for (const org of ['org-a', 'org-b'])
      await gateway.admin('POST', '/ui/api/organizations', { organization_id: org });
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-a', organization_id: 'org-a' });
    await gateway.admin('POST', '/ui/api/teams', { team_id: 'team-b', organization_id: 'org-b' });
    await gateway.admin('POST', '/ui/api/users', {
      user_id: 'boss-a',
      organization_id: 'org-a',
      role: 'org_admin',
    });
    orgAdmin = await gateway.createKey({ user_id: 'boss-a' });
    // 1,200 rows of organization B (more than two pages of the cursor), then hostile cells of A.
    const rows = Array.from({ length: 1200 }, (_, index) => spendRow(index + 10));
    rows.push(
      spendRow(1, { team_id: 'team-a', organization_id: 'org-a', model: 'a,"quoted"\nmodel', status: 429 }),
      spendRow(2, { team_id: 'team-a', organization_id: 'org-a', model: '=HYPERLINK("http://x")' }),
      spendRow(3, { team_id: 'team-a', organization_id: 'org-a', model: '@SUM(1)', cost: null }),
    );
    await insertSpend(gateway, rows);
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('streams every matching spend record past several cursor pages, newest first, with a header row', async () => {
    const { response, status, text } = await download('/ui/api/spend/logs/export?team_id=team-b');
    expect(status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('content-disposition')).toBe(
      'attachment; filename="switchboard-spend-all-2026-11-24.csv"',
    );
    // The cap travels with the file, so a client can tell a file cut at it.
    expect(response.headers.get('x-export-row-cap')).toBe(String(EXPORT_ROW_CAP));
    const [header, ...records] = parseCsv(text);
    expect(header!.slice(0, 3)).toEqual(['request_id', 'created_at', 'key_id']);
    expect(records).toHaveLength(1200);
    const ids = records.map((record) => record[0]);
    expect(ids[0]).toBe('req-000010');
    expect(ids.at(-1)).toBe('req-001209');
    expect(new Set(ids).size).toBe(1200);
    const column = (name: string) => header!.indexOf(name);
    expect(records[0]![column('created_at')]).toBe(new Date(NOW - 10_000).toISOString());
    expect(records[0]![column('stream')]).toBe('false');
  });

  it('answers HEAD with 404 on both exports: a HEAD would read the whole export to throw it away', async () => {
    for (const path of ['/ui/api/spend/logs/export', '/ui/api/audit/export']) {
      const response = await fetch(`${gateway.baseUrl}${path}`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${gateway.masterKey}` },
      });
      expect(response.status, path).toBe(404);
    }
  });

  it('quotes cells per RFC 4180 and prefixes formula-like cells with an apostrophe', async () => {
    const { text } = await download('/ui/api/spend/logs/export?team_id=team-a');
    const [header, ...records] = parseCsv(text);
    const model = header!.indexOf('model');
    expect(records.map((record) => record[model])).toEqual([
      'a,"quoted"\nmodel',
      `'=HYPERLINK("http://x")`,
      `'@SUM(1)`,
    ]);
    expect(records[2]![header!.indexOf('cost')]).toBe('');
  });

  it("applies the list's filters and names the file after from and to", async () => {
    const { response, text } = await download(
      '/ui/api/spend/logs/export?status=429&from=2026-11-24T00:00:00Z&to=2026-11-25',
    );
    expect(
      parseCsv(text)
        .slice(1)
        .map((record) => record[0]),
    ).toEqual(['req-000001']);
    expect(response.headers.get('content-disposition')).toContain(
      'switchboard-spend-2026-11-24-2026-11-25.csv',
    );
    for (const [query, field] of [
      ['status=teapot', 'status'],
      ['from=yesterday', 'from'],
      ['team_id=', 'team_id'],
    ]) {
      const refused = await download(`/ui/api/spend/logs/export?${query}`);
      expect(refused.status, query).toBe(400);
      expect(JSON.parse(refused.text).error.param, query).toBe(field);
    }
  });

  it("gives an organization administrator their organization's records only", async () => {
    const { text } = await download('/ui/api/spend/logs/export', orgAdmin);
    expect(
      parseCsv(text)
        .slice(1)
        .map((record) => record[0]),
    ).toEqual(['req-000001', 'req-000002', 'req-000003']);
    expect((await download('/ui/api/spend/logs/export?team_id=team-b', orgAdmin)).status).toBe(403);
  });

  it('exports the audit log with its filters, JSON before/after read back intact, narrowed for org admins', async () => {
    const { status, text, response } = await download(
      '/ui/api/audit/export?action=team.create&target_type=team',
    );
    expect(status).toBe(200);
    expect(response.headers.get('content-disposition')).toMatch(/switchboard-audit-all-2026-11-24\.csv/);
    expect(response.headers.get('x-export-row-cap')).toBe('100000');
    const [header, ...records] = parseCsv(text);
    expect(header).toEqual([
      'audit_id',
      'created_at',
      'actor',
      'actor_key_id',
      'action',
      'target_type',
      'target_id',
      'organization_id',
      'request_id',
      'before',
      'after',
    ]);
    expect(records.map((record) => record[6]).sort()).toEqual(['team-a', 'team-b']);
    const teamA = records.find((record) => record[6] === 'team-a')!;
    expect(teamA[9]).toBe('');
    expect(JSON.parse(teamA[10]!)).toMatchObject({ team_id: 'team-a', organization_id: 'org-a' });
    const listed = await gateway.admin('GET', '/ui/api/audit?limit=500');
    const all = parseCsv((await download('/ui/api/audit/export')).text).slice(1);
    expect(all.map((record) => record[0])).toEqual(listed.body.data.map((entry: any) => entry.audit_id));
    const mine = parseCsv((await download('/ui/api/audit/export', orgAdmin)).text).slice(1);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((record) => record[7] === 'org-a')).toBe(true);
    expect((await download('/ui/api/audit/export?action=explode')).status).toBe(400);
  });
});

describe('the export row cap', () => {
  let backend: Backend;
  let gateway: TestGateway;
  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend, clock: new ManualClock(NOW) });
    await insertSpend(
      gateway,
      Array.from({ length: EXPORT_ROW_CAP + 5 }, (_, index) => spendRow(index)),
    );
  }, 120_000);
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it(`stops after ${EXPORT_ROW_CAP} rows, the newest`, async () => {
    const response = await fetch(`${gateway.baseUrl}/ui/api/spend/logs/export`, {
      headers: { authorization: `Bearer ${gateway.masterKey}` },
    });
    const records = parseCsv(await response.text()).slice(1);
    expect(records).toHaveLength(EXPORT_ROW_CAP);
    expect(records.at(-1)![0]).toBe(`req-${String(EXPORT_ROW_CAP - 1).padStart(6, '0')}`);
  }, 120_000);
});
