/**
 * Flow 7 (issue 17): an organization administrator signed in with their own key sees only their
 * organization's keys and teams, an Overview that counts their organization's requests only (and says
 * so), an MCP server's bindings of their organization only, and no MCP server writes (the admin API
 * would refuse them: docs/api.md, admin scope).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import { adminOk, bind, callTool, createKey, registerServer, setPolicy } from '../support/mcp-fixtures.ts';
import { type ConsoleHarness, startConsoleHarness } from './support/console-harness.ts';
import { cardNumber, expectNoProblems, statCard, table } from './support/page-queries.ts';

describe('an organization administrator in the console', () => {
  let harness: ConsoleHarness;
  let orgAdminKey: string;
  let tools: FakeMcpServer;

  beforeAll(async () => {
    harness = await startConsoleHarness();
    tools = await startFakeMcpServer({ mode: 'stateless' });
    const gateway = harness.gateway;
    const serviceKeys: string[] = [];
    // Two requests in organization A, three in B: the org admin's Overview must count A's only.
    for (const [org, alias, requests] of [
      ['org-acme', 'Acme', 2],
      ['org-globex', 'Globex', 3],
    ] as const) {
      await adminOk(gateway, 'POST', '/ui/api/organizations', {
        organization_id: org,
        organization_alias: alias,
      });
      await adminOk(gateway, 'POST', '/ui/api/teams', {
        team_id: `${org}-team`,
        team_alias: `${alias} research`,
        organization_id: org,
      });
      const key = await createKey(gateway, {
        key_name: `${alias.toLowerCase()}-service`,
        team_id: `${org}-team`,
      });
      serviceKeys.push(key.key);
      await adminOk(gateway, 'POST', '/ui/api/users', { user_id: `${org}-member`, team_id: `${org}-team` });
      const client = new OpenAI({ apiKey: key.key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
      for (let call = 0; call < requests; call++)
        await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'Hi' }] });
    }
    await adminOk(gateway, 'POST', '/ui/api/users', {
      user_id: 'ada',
      role: 'org_admin',
      organization_id: 'org-acme',
    });
    orgAdminKey = (await createKey(gateway, { user_id: 'ada', key_name: 'ada-admin' })).key;
    const wiki = await registerServer(gateway, {
      server_key: 'wiki',
      name: 'Company wiki',
      base_url: 'http://127.0.0.1:9/mcp',
      enabled: false,
    });
    // Each organization's team may use the wiki: the server page must show Acme's binding only.
    for (const org of ['org-acme', 'org-globex'])
      await bind(gateway, { server_id: wiki.server_id, scope_type: 'team', scope_id: `${org}-team` });
    // And a working tool server whose calls wait for approval, one pending call per organization.
    const ops = await registerServer(gateway, { server_key: 'ops', base_url: tools.url });
    for (const [index, org] of ['org-acme', 'org-globex'].entries()) {
      const scope = { server_id: ops.server_id, scope_type: 'team', scope_id: `${org}-team` };
      await bind(gateway, scope);
      await setPolicy(gateway, { ...scope, tool_name: 'echo', require_approval: 'manual' });
      const pending = await callTool(gateway.baseUrl, serviceKeys[index]!, 'ops.echo', { text: org });
      expect(pending.error?.code, JSON.stringify(pending)).toBe(-32008);
    }
  });
  afterAll(async () => {
    await harness?.close();
    await tools?.close();
  });

  it('sees only organization A’s keys, teams, requests and MCP bindings, the organization-only note, and no MCP server writes', async () => {
    const console = await harness.openConsole('org-admin');
    const page = console.page;
    await console.openSignedIn(orgAdminKey);
    await expect.poll(() => page.getByTestId('actor').innerText()).toContain('org-acme');

    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page
      .getByText(/organization org-acme only/i)
      .first()
      .waitFor();
    const requests = statCard(page, 'Requests');
    await expect.poll(() => cardNumber(requests, 'Requests')).toBe(2);
    await console.screenshot('overview');

    await console.navigate('Keys & identities');
    const keys = table(page, 'Keys');
    await keys.getByText('acme-service', { exact: true }).waitFor();
    expect(await keys.getByText('globex-service').count()).toBe(0);
    await console.screenshot('keys');

    await page.getByRole('link', { name: 'Teams', exact: true }).click();
    const teams = table(page, 'Teams');
    await teams.getByText('Acme research', { exact: true }).waitFor();
    expect(await teams.getByText('Globex research').count()).toBe(0);
    await console.screenshot('teams');

    await page.getByRole('link', { name: 'Organizations', exact: true }).click();
    const organizations = table(page, 'Organizations');
    await organizations.getByText('Acme', { exact: true }).waitFor();
    expect(await organizations.getByText('Globex').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'New organization' }).count()).toBe(0);

    await console.navigate('MCP');
    const servers = table(page, 'MCP servers');
    await servers.getByText('Company wiki').first().waitFor();
    expect(await page.getByRole('button', { name: 'Register server' }).count()).toBe(0);
    await console.screenshot('mcp-servers');
    await servers.getByRole('link', { name: 'Company wiki' }).click();
    await page.getByRole('heading', { name: 'Company wiki' }).waitFor();
    for (const write of ['Refresh tools', 'Edit', 'Delete'])
      expect(await page.getByRole('button', { name: write, exact: true }).count(), write).toBe(0);
    const bindings = table(page, 'Bindings of Company wiki');
    await bindings.getByText(/org-acme-team/).waitFor();
    expect(await bindings.getByText(/org-globex-team/).count()).toBe(0);
    await console.screenshot('mcp-server-detail');
    expectNoProblems(console);
  });

  it('sees none of organization B’s users, spend records, audit entries, approvals, bindings or policies', async () => {
    const console = await harness.openConsole('org-admin');
    const page = console.page;
    await console.openSignedIn(orgAdminKey);
    // Each page, reached as a person would (section, then tab), shows Acme's row (so it has loaded)
    // and none of Globex's.
    const pages: Array<[section: string, tab: string | null, caption: string, ours: RegExp]> = [
      ['Keys & identities', 'Users', 'Users', /org-acme-member/],
      ['Spend & audit', null, 'Spend records', /org-acme-team/],
      ['Spend & audit', 'Audit log', 'Audit log', /org-acme-team/],
      ['MCP', 'Approvals', 'Pending approvals', /org-acme-team/],
      ['MCP', 'Bindings', 'Bindings', /org-acme-team/],
      ['MCP', 'Policies', 'Tool policies', /org-acme-team/],
    ];
    for (const [section, tab, caption, ours] of pages) {
      await console.navigate(section);
      if (tab) await page.getByRole('link', { name: tab, exact: true }).click();
      const rows = table(page, caption);
      await rows.getByText(ours).filter({ visible: true }).first().waitFor();
      expect(await rows.getByText(/globex/i).count(), `${caption}: organization B's rows`).toBe(0);
    }
    expectNoProblems(console);
  });
});
