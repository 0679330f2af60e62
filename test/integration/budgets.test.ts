/**
 * Spend budgets (issue 12) on the embedded default and on PostgreSQL + Redis: a cost settled at each
 * scope blocks the next request, two admissions ("processes") sharing the store see each other's spend,
 * windows reset on an injected clock, soft budgets warn, reconciliation restores counters from
 * spend_logs, and the admin API validates budget fields strictly.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopeBudget } from '../../src/canonical/budget-window.ts';
import type { BudgetFields, Caller, ScopeKind, ScopePolicy } from '../../src/canonical/caller.ts';
import { BudgetReconciler } from '../../src/limits/budget-reconciler.ts';
import { type AdmissionTicket, CallerAdmission } from '../../src/limits/caller-admission.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { MemorySharedStore } from '../../src/store/shared/memory-shared-store.ts';
import { RedisSharedStore } from '../../src/store/shared/redis-shared-store.ts';
import type { SharedStore } from '../../src/store/shared/shared-store.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const at = (iso: string) => Date.parse(iso);
const silent = pino({ level: 'silent' });
const noBudget: BudgetFields = { max_budget: null, soft_budget: null, budget_duration: null };

describe.each(await availableBackends())('budgets on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  const clock = new ManualClock(at('2026-11-23T12:00:00Z'));
  const extraStores: RedisSharedStore[] = [];
  let sequence = 0;
  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++sequence}`;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({
      backend,
      clock,
      generalSettings: '  budget_reconcile_interval_seconds: 0\n',
    });
  });
  afterAll(async () => {
    for (const store of extraStores) await store.close();
    await gateway?.close();
    await backend?.cleanup();
  });

  /** Another "process": its own connection to the same Redis prefix (the same memory store embedded). */
  async function processStore(): Promise<SharedStore> {
    if (!backend.redisUrl) return gateway.gateway.store;
    const store = new RedisSharedStore({
      url: backend.redisUrl,
      prefix: backend.prefix,
      commandTimeoutMs: 1000,
      clock,
    });
    extraStores.push(store);
    await store.waitUntilReady(2000);
    return store;
  }

  async function admission(store?: SharedStore, logger = silent): Promise<CallerAdmission> {
    return new CallerAdmission({
      store: store ?? (await processStore()),
      fallback: new MemorySharedStore(clock),
      settings: { redis_degraded_mode: 'fail_open', budget_reservation_default_max_tokens: 4096 },
      metrics: createMetrics({ collectProcessMetrics: false }),
      logger,
    });
  }

  /** A key caller under an organization, team and user, with budgets on the named scopes. */
  function caller(budgets: Partial<Record<ScopeKind, Partial<BudgetFields>>>): Caller {
    const ids = { org: unique('org'), team: unique('team'), user: unique('user'), key: unique('key') };
    const scopes: ScopePolicy[] = (['org', 'team', 'user', 'key'] as const).map((kind) => ({
      kind,
      id: ids[kind],
      limits: {} as ScopePolicy['limits'],
      budget: scopeBudget({ ...noBudget, ...budgets[kind] }),
    }));
    return {
      kind: 'api_key',
      keyId: ids.key,
      keyName: null,
      userId: ids.user,
      teamId: ids.team,
      organizationId: ids.org,
      userRole: 'member',
      models: null,
      maxParallelRequests: null,
      cacheEnabled: null,
      scopes,
      expiresAt: null,
    };
  }

  const admit = (target: CallerAdmission, who: Caller): Promise<AdmissionTicket> =>
    target.admit({ caller: who, model: 'demo', tokenEstimate: 1, requestId: unique('req'), reads: [] });

  const scopeParams = [
    ['org', 'organization_budget'],
    ['team', 'team_budget'],
    ['user', 'user_budget'],
    ['key', 'key_budget'],
  ] as const;

  it.each(scopeParams)(
    'a cost settled at %s blocks the next request (%s), in another process too',
    async (kind, param) => {
      clock.set(at('2026-11-23T12:00:00Z'));
      const who = caller({ [kind]: { max_budget: 1, budget_duration: '1d' } });
      const first = await admission();
      const second = await admission();
      await (await admit(first, who)).settle({ cost: 0.4 });
      await (await admit(second, who)).settle({ cost: 0.6 });
      for (const target of [first, second]) {
        const refused = await admit(target, who).catch((error: unknown) => error);
        expect(refused).toMatchObject({
          status: 429,
          type: 'rate_limit_error',
          code: `${param}_exceeded`,
          param,
          retryAfter: 12 * 3600,
        });
      }
    },
  );

  it('a caller under budget, unknown costs and the master key are never refused', async () => {
    clock.set(at('2026-11-23T12:00:00Z'));
    const who = caller({ key: { max_budget: 1 } });
    const target = await admission();
    await (await admit(target, who)).settle({ cost: 0.999 });
    await (await admit(target, who)).settle({ cost: null });
    await (await admit(target, who)).settle({});
    await expect(admit(target, who)).resolves.toBeDefined();
  });

  it('a lifetime budget answers without retry-after and with x-should-retry: false', async () => {
    const who = caller({ team: { max_budget: 2 } });
    const target = await admission();
    await (await admit(target, who)).settle({ cost: 2 });
    clock.advance(400 * 86_400_000);
    const refused = await admit(target, who).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 429, code: 'team_budget_exceeded', retryAfter: undefined });
    expect((refused as { headers: Record<string, string> }).headers['x-should-retry']).toBe('false');
  });

  it('resets at the end of the epoch-aligned window (injected clock)', async () => {
    clock.set(at('2026-11-23T22:00:00Z'));
    const who = caller({
      user: { max_budget: 5, budget_duration: '1d' },
      key: { max_budget: 5, budget_duration: '2h' },
    });
    const target = await admission();
    await (await admit(target, who)).settle({ cost: 5 });
    const refused = await admit(target, who).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'user_budget_exceeded', retryAfter: 2 * 3600 });
    clock.set(at('2026-11-24T00:00:00Z'));
    await expect(admit(target, who)).resolves.toBeDefined();
  });

  it('warns with x-switchboard-budget-warning at the soft budget, and logs once per window', async () => {
    clock.set(at('2026-11-23T12:00:00Z'));
    const warnings: unknown[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
    const who = caller({
      key: { max_budget: 10, soft_budget: 2, budget_duration: '1d' },
      org: { soft_budget: 1 },
    });
    const target = await admission(undefined, logger);
    expect((await admit(target, who)).headers['x-switchboard-budget-warning']).toBeUndefined();
    await (await admit(target, who)).settle({ cost: 1.5 });
    expect((await admit(target, who)).headers['x-switchboard-budget-warning']).toBe('organization=1.5/1');
    await (await admit(target, who)).settle({ cost: 0.5 });
    expect((await admit(target, who)).headers['x-switchboard-budget-warning']).toBe(
      'organization=2/1,key=2/2',
    );
    expect(warnings).toHaveLength(2);
  });

  it('reconciles counters from spend_logs (raising them, never lowering them)', async () => {
    clock.set(at('2026-11-23T12:00:00Z'));
    const org = unique('org');
    const key = unique('key');
    await gateway.admin('POST', '/ui/api/organizations', {
      organization_id: org,
      max_budget: 3,
      budget_duration: '7d',
    });
    const db = gateway.gateway.database.db;
    const row = (id: string, cost: number | null, createdAt: number) => ({
      spend_id: id,
      request_id: id,
      created_at: createdAt,
      key_id: key,
      user_id: null,
      team_id: null,
      organization_id: org,
      model: 'demo',
      model_group: 'demo',
      deployment_id: 'demo-fake',
      endpoint: '/v1/chat/completions',
      attempts: 1,
      stream: 0,
      status: 200,
      usage_known: 1,
      usage_estimated: 0,
      prompt_tokens: 1,
      completion_tokens: 1,
      reasoning_tokens: null,
      cached_tokens: null,
      cache_creation_tokens: null,
      total_tokens: 2,
      cost,
      latency_ms: 1,
      ttft_ms: null,
      cache_hit: 0,
    });
    // 7d windows are aligned to the epoch (a Thursday): this one began 2026-11-19T00:00Z.
    await db
      .insertInto('spend_logs')
      .values([
        row(unique('r'), 2, at('2026-11-20T00:00:00Z')),
        row(unique('r'), 1.5, at('2026-11-23T11:00:00Z')),
        row(unique('r'), null, at('2026-11-23T11:00:00Z')),
        row(unique('r'), 50, at('2026-11-18T23:59:59Z')),
      ])
      .execute();
    const store = gateway.gateway.store;
    const reconciler = new BudgetReconciler({ db, store, clock, intervalMs: 0, logger: silent });
    expect(await reconciler.reconcile()).toBeGreaterThanOrEqual(1);
    const who: Caller = {
      ...caller({}),
      organizationId: org,
      scopes: [
        {
          kind: 'org',
          id: org,
          limits: {} as ScopePolicy['limits'],
          budget: scopeBudget({ max_budget: 3, soft_budget: 1, budget_duration: '7d' }),
        },
      ],
    };
    const target = await admission(store);
    const refused = await admit(target, who).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'organization_budget_exceeded' });
    expect((refused as Error).message).toContain('spent $3.5');
    // A counter above the database's sum (charges not written yet) is kept.
    const soft: Caller = {
      ...who,
      scopes: [
        {
          ...who.scopes[0]!,
          budget: scopeBudget({ max_budget: null, soft_budget: 1, budget_duration: '7d' }),
        },
      ],
    };
    await (await admit(target, soft)).settle({ cost: 1 });
    await reconciler.reconcile();
    expect((await admit(target, soft)).headers['x-switchboard-budget-warning']).toBe('organization=4.5/1');
  });

  it('carries stored budgets into the Caller: max_budget 0 refuses over HTTP, and a change applies at once', async () => {
    clock.set(at('2026-11-23T18:00:00Z'));
    const created = await gateway.admin('POST', '/ui/api/keys', {});
    const chat = () =>
      fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${created.body.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await chat()).status).toBe(200);
    const updated = await gateway.admin('PUT', `/ui/api/keys/${created.body.key_id}`, {
      max_budget: 0,
      budget_duration: '1d',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ max_budget: 0, soft_budget: null, budget_duration: '1d' });
    const refused = await chat();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe(String(6 * 3600));
    expect(((await refused.json()) as { error: unknown }).error).toMatchObject({
      type: 'rate_limit_error',
      code: 'key_budget_exceeded',
      param: 'key_budget',
    });
  });

  it.each([
    [{ max_budget: '10' }, 'max_budget'],
    [{ max_budget: -1 }, 'max_budget'],
    [{ max_budget: 1e13 }, 'max_budget'],
    [{ soft_budget: true }, 'soft_budget'],
    [{ max_budget: 1, soft_budget: 2 }, 'soft_budget'],
    [{ budget_duration: '366d' }, 'budget_duration'],
    [{ budget_duration: '8761h' }, 'budget_duration'],
    [{ budget_duration: '0d' }, 'budget_duration'],
    [{ budget_duration: '1w' }, 'budget_duration'],
    [{ budget_duration: 30 }, 'budget_duration'],
  ])('the admin API refuses %j with a 400 naming %s, and stores nothing', async (body, field) => {
    const team = unique('team');
    await gateway.admin('POST', '/ui/api/teams', { team_id: team, max_budget: 5, soft_budget: 1 });
    for (const [method, path] of [
      ['PUT', `/ui/api/teams/${team}`],
      ['POST', '/ui/api/keys'],
      ['POST', '/ui/api/organizations'],
      ['POST', '/ui/api/users'],
    ] as const) {
      const response = await gateway.admin(method, path, body);
      expect(response.status, `${method} ${path}`).toBe(400);
      expect(response.body.error.param ?? response.body.error.message).toContain(field);
    }
    const stored = await gateway.admin('GET', `/ui/api/teams/${team}`);
    expect(stored.body).toMatchObject({ max_budget: 5, soft_budget: 1, budget_duration: null });
  });

  it('accepts budgets on every scope and shows them in the views', async () => {
    const budget = { max_budget: 12.5, soft_budget: 10, budget_duration: '30d' };
    const org = await gateway.admin('POST', '/ui/api/organizations', budget);
    const team = await gateway.admin('POST', '/ui/api/teams', { ...budget, budget_duration: '12h' });
    const user = await gateway.admin('POST', '/ui/api/users', { ...budget, budget_duration: null });
    const key = await gateway.admin('POST', '/ui/api/keys', budget);
    expect(org.body).toMatchObject(budget);
    expect(team.body).toMatchObject({ ...budget, budget_duration: '12h' });
    expect(user.body).toMatchObject({ ...budget, budget_duration: null });
    expect(key.body).toMatchObject(budget);
  });
});
