/**
 * `search` on the identity lists (issue 17: the console's search covers every page, not only the loaded
 * one), on SQLite and PostgreSQL: a case-insensitive "contains" over ids and names, counted in `total`
 * and paged like any list; `%` and `_` match themselves; an organization administrator's search stays
 * inside their organization; an over-long or NUL-bearing search is a 400 naming `search`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { adminOk, createKey } from '../support/mcp-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('identity list search on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let acmeAdminKey: string;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend });
    for (const [org, alias] of [
      ['org-acme', 'Acme Corporation'],
      ['org-globex', 'Globex'],
    ] as const) {
      await adminOk(gateway, 'POST', '/ui/api/organizations', {
        organization_id: org,
        organization_alias: alias,
      });
      await adminOk(gateway, 'POST', '/ui/api/teams', {
        team_id: `${org}-fin`,
        team_alias: 'Billing',
        organization_id: org,
      });
    }
    for (const name of [
      'Billing-Export',
      'billing-import',
      'checkout',
      '100%_done',
      '100xydone',
      'wow!_x',
      'a\\b',
    ])
      await createKey(gateway, { key_name: name, team_id: 'org-acme-fin' });
    await createKey(gateway, { key_name: 'globex-billing-bot', team_id: 'org-globex-fin' });
    await adminOk(gateway, 'POST', '/ui/api/users', {
      user_id: 'ada',
      email: 'Ada@Acme.example',
      role: 'org_admin',
      organization_id: 'org-acme',
    });
    acmeAdminKey = (await createKey(gateway, { user_id: 'ada', key_name: 'ada-admin' })).key;
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const names = async (path: string, field: string, key?: string) => {
    const response = key
      ? await fetch(`${gateway.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } })
      : undefined;
    const body = response ? await response.json() : (await gateway.admin('GET', path)).body;
    return {
      names: (body.data as Array<Record<string, string>>).map((row) => row[field]),
      total: body.total,
    };
  };

  it('finds keys by part of their name, ignoring case, across pages', async () => {
    expect(await names('/ui/api/keys?search=BILLING', 'key_name')).toEqual({
      names: ['Billing-Export', 'billing-import', 'globex-billing-bot'],
      total: 3,
    });
    // One a page: the total counts every match, and the second page holds the second.
    expect(await names('/ui/api/keys?search=billing&limit=1&offset=1', 'key_name')).toEqual({
      names: ['billing-import'],
      total: 3,
    });
  });

  it('finds keys by their team, and matches %, _, ! and \\ as themselves', async () => {
    expect((await names('/ui/api/keys?search=org-globex', 'key_name')).names).toEqual(['globex-billing-bot']);
    const searchFor = async (text: string) =>
      (await names(`/ui/api/keys?search=${encodeURIComponent(text)}`, 'key_name')).names;
    expect(await searchFor('%_')).toEqual(['100%_done']);
    // The LIKE escape character and a backslash are plain characters too.
    expect(await searchFor('!_')).toEqual(['wow!_x']);
    expect(await searchFor('\\')).toEqual(['a\\b']);
  });

  it('finds organizations, teams and users by alias, id or email', async () => {
    expect((await names('/ui/api/organizations?search=corporation', 'organization_id')).names).toEqual([
      'org-acme',
    ]);
    expect((await names('/ui/api/teams?search=billing', 'team_id')).names).toEqual([
      'org-acme-fin',
      'org-globex-fin',
    ]);
    expect((await names('/ui/api/users?search=acme.EXAMPLE', 'user_id')).names).toEqual(['ada']);
  });

  it("keeps an organization administrator's search inside their organization", async () => {
    expect(await names('/ui/api/keys?search=billing', 'key_name', acmeAdminKey)).toEqual({
      names: ['Billing-Export', 'billing-import'],
      total: 2,
    });
    expect((await names('/ui/api/teams?search=billing', 'team_id', acmeAdminKey)).names).toEqual([
      'org-acme-fin',
    ]);
  });

  it.each(['/ui/api/keys', '/ui/api/users', '/ui/api/teams', '/ui/api/organizations'])(
    '%s refuses a search over 200 characters or with a NUL with a 400 naming search',
    async (path) => {
      for (const search of ['a'.repeat(201), 'bill\u0000ing']) {
        const response = await gateway.admin('GET', `${path}?search=${encodeURIComponent(search)}`);
        expect(response.status).toBe(400);
        expect(response.body.error.param).toBe('search');
      }
    },
  );
});
