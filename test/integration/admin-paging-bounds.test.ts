/**
 * Paging bounds of every admin list (issue 25: `?offset=9007199254740993` was a 500 on all nine lists,
 * PostgreSQL logging `out of range for type bigint`): every list route documented in /openapi.json
 * with `offset` and `limit` answers an out-of-range value with 400 naming the field, on both backends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAGE_OFFSET } from '../../src/identity/admin-schemas.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe.each(await availableBackends())('admin paging bounds on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let lists: string[];

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend });
    const document = (await (await fetch(`${gateway.baseUrl}/openapi.json`)).json()) as any;
    lists = Object.entries(document.paths as Record<string, any>)
      .filter(([path, operations]) => {
        const names = (operations.get?.parameters ?? []).map((parameter: any) => parameter.name);
        return path.startsWith('/ui/api/') && names.includes('offset') && names.includes('limit');
      })
      .map(([path]) => path);
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('finds the nine admin lists in the API reference', () => {
    expect(lists.sort()).toEqual([
      '/ui/api/keys',
      '/ui/api/mcp-approval-requests',
      '/ui/api/mcp-bindings',
      '/ui/api/mcp-servers',
      '/ui/api/mcp-tool-policies',
      '/ui/api/organizations',
      '/ui/api/teams',
      '/ui/api/tier-policies',
      '/ui/api/users',
    ]);
  });

  it.each([
    ['offset', '9007199254740993'],
    ['offset', '1e300'],
    ['offset', String(MAX_PAGE_OFFSET + 1)],
    ['offset', '-1'],
    ['offset', 'abc'],
    ['limit', '9007199254740993'],
    ['limit', '0'],
    ['limit', '501'],
  ])('refuses %s=%s on every admin list with 400 naming the field', async (field, value) => {
    for (const path of lists) {
      const response = await gateway.admin('GET', `${path}?${field}=${value}`);
      expect(response.status, `${path} ${field}=${value}: ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.error.param, path).toBe(field);
    }
  });

  it('answers an empty page at the largest offset on every admin list', async () => {
    for (const path of lists) {
      const response = await gateway.admin('GET', `${path}?offset=${MAX_PAGE_OFFSET}&limit=500`);
      expect(response.status, `${path}: ${JSON.stringify(response.body)}`).toBe(200);
      expect(response.body).toMatchObject({ data: [], offset: MAX_PAGE_OFFSET, limit: 500 });
    }
  });
});
