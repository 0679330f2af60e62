/**
 * Flow 9, the accessibility smoke (issue 17), on a gateway with a day of seeded traffic: every page of
 * the console, and the form its primary button opens, has a name for every input and its text at WCAG AA
 * contrast (support/text-contrast.ts); Tab from the top of the page reaches that button; no page logs an
 * error. The same visit takes the documentation's screenshots (docs/console/*.png, rewritten only with
 * UPDATE_CONSOLE_SCREENSHOTS=1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMcpServer, startFakeMcpServer } from '../fakes/mcp/fake-mcp-server.ts';
import {
  type ConsoleHarness,
  type ConsolePage,
  startConsoleHarness,
  VIEWPORT,
} from './support/console-harness.ts';
import {
  cardNumber,
  columnTexts,
  expectNoProblems,
  horizontalOverflow,
  statCard,
  tabReaches,
  unlabelledControls,
  unnamedButtonsAndLinks,
} from './support/page-queries.ts';
import { type SeededWorld, seedConsoleWorld, tourModels } from './support/seed-console-world.ts';
import { ShiftedClock } from './support/shifted-clock.ts';
import { lowContrastText } from './support/text-contrast.ts';

const SMALL_LAPTOP = { width: 1280, height: 720 };

interface Stop {
  /** Screenshot name (docs/console/<name>.png when curated). */
  name: string;
  path: string;
  /** What shows the page has loaded its data. */
  ready: (console: ConsolePage) => Promise<unknown>;
  /** The control a keyboard user must be able to reach. */
  primary: { role: 'button' | 'combobox' | 'link'; name: string };
  /** True when the primary button opens a form whose inputs are checked too. */
  opensForm?: boolean;
  documentation?: boolean;
}

const captioned = (caption: string) => (console: ConsolePage) =>
  console.page.getByRole('table', { name: caption, exact: true }).waitFor();

const stops: Stop[] = [
  {
    name: 'overview',
    path: '/ui/',
    ready: captioned('Top models'),
    primary: { role: 'combobox', name: 'Time window' },
    documentation: true,
  },
  {
    name: 'models',
    path: '/ui/models',
    ready: captioned('Deployments of claude-sonnet'),
    primary: { role: 'button', name: 'Refresh' },
    documentation: true,
  },
  {
    name: 'keys',
    path: '/ui/identities/keys',
    ready: captioned('Keys'),
    primary: { role: 'button', name: 'New key' },
    opensForm: true,
    documentation: true,
  },
  {
    name: 'users',
    path: '/ui/identities/users',
    ready: captioned('Users'),
    primary: { role: 'button', name: 'New user' },
    opensForm: true,
    documentation: true,
  },
  {
    name: 'teams',
    path: '/ui/identities/teams',
    ready: captioned('Teams'),
    primary: { role: 'button', name: 'New team' },
    opensForm: true,
    documentation: true,
  },
  {
    name: 'organizations',
    path: '/ui/identities/organizations',
    ready: captioned('Organizations'),
    primary: { role: 'button', name: 'New organization' },
    opensForm: true,
    documentation: true,
  },
  {
    name: 'mcp-servers',
    path: '/ui/mcp/servers',
    ready: captioned('MCP servers'),
    primary: { role: 'button', name: 'Register server' },
    opensForm: true,
    documentation: true,
  },
  {
    name: 'approvals',
    path: '/ui/mcp/approvals',
    ready: captioned('Pending approvals'),
    primary: { role: 'button', name: 'Approve' },
    documentation: true,
  },
  {
    name: 'mcp-bindings',
    path: '/ui/mcp/bindings',
    ready: captioned('Bindings'),
    primary: { role: 'button', name: 'New binding' },
    opensForm: true,
  },
  {
    name: 'mcp-policies',
    path: '/ui/mcp/policies',
    ready: captioned('Tool policies'),
    primary: { role: 'button', name: 'New policy' },
    opensForm: true,
  },
  {
    name: 'spend',
    path: '/ui/spend',
    ready: captioned('Spend summary'),
    primary: { role: 'button', name: 'Export CSV' },
    documentation: true,
  },
  {
    name: 'audit',
    path: '/ui/spend/audit',
    ready: captioned('Audit log'),
    primary: { role: 'button', name: 'Export CSV' },
    documentation: true,
  },
];

describe('a tour of the console', () => {
  let harness: ConsoleHarness;
  let mcpUpstream: FakeMcpServer;
  let world: SeededWorld;

  beforeAll(async () => {
    const clock = new ShiftedClock();
    // The gateway starts a day ago, so the seeded traffic fills the Overview's last 24 hours.
    clock.hoursAgo(24);
    harness = await startConsoleHarness({ yaml: tourModels, clock });
    mcpUpstream = await startFakeMcpServer({ mode: 'stateless' });
    world = await seedConsoleWorld(harness.gateway, clock, mcpUpstream);
  }, 180_000);
  afterAll(async () => {
    await world?.close();
    await harness?.close();
    await mcpUpstream?.close();
  });

  it.each(stops)(
    '$name: labelled inputs, named buttons and links, AA text contrast, the primary control reachable by Tab, no console errors',
    async (stop) => {
      const console = await harness.openConsole('tour');
      await console.openSignedIn(harness.masterKey, stop.path);
      await stop.ready(console);
      await console.page.waitForLoadState('networkidle');
      if (stop.documentation) await console.documentationScreenshot(stop.name);
      else await console.screenshot(stop.name);

      expect(await unlabelledControls(console.page)).toEqual([]);
      expect(await unnamedButtonsAndLinks(console.page)).toEqual([]);
      expect(await lowContrastText(console.page), 'text below WCAG AA contrast').toEqual([]);
      const primary = console.page
        .getByRole(stop.primary.role, { name: stop.primary.name, exact: true })
        .first();
      expect(await tabReaches(console.page, primary), `Tab reaches "${stop.primary.name}"`).toBe(true);

      // A smaller laptop screen: the page fits its width (wide tables scroll inside their own box).
      await console.page.setViewportSize(SMALL_LAPTOP);
      // Charts re-measure their box after the resize (ResizeObserver), so the width settles within frames.
      await expect
        .poll(() => horizontalOverflow(console.page), { message: 'page wider than 1280 px' })
        .toBe(0);
      await console.page.setViewportSize(VIEWPORT);

      if (stop.opensForm) {
        await console.page.keyboard.press('Enter');
        await console.page.locator('form').last().waitFor();
        expect(await unlabelledControls(console.page)).toEqual([]);
        expect(await lowContrastText(console.page), 'text below WCAG AA contrast').toEqual([]);
        await console.screenshot(`${stop.name}-form`);
      }
      expectNoProblems(console);
    },
  );

  it('sign-in: the key field is labelled, AA text contrast, Tab reaches "Sign in", no console errors', async () => {
    const console = await harness.openConsole('tour');
    await console.goto('/ui/');
    const signIn = console.page.getByRole('button', { name: 'Sign in', exact: true });
    await signIn.waitFor();
    expect(await unlabelledControls(console.page)).toEqual([]);
    expect(await lowContrastText(console.page), 'text below WCAG AA contrast').toEqual([]);
    expect(await tabReaches(console.page, signIn)).toBe(true);
    expectNoProblems(console);
  });

  it('the contrast check flags text below AA and passes what AA allows', async () => {
    const console = await harness.openConsole('tour');
    await console.page.setContent(`
      <p style="color:#777777">grey on white, 4.48:1</p>
      <p style="color:#767676">grey on white, 4.54:1</p>
      <p style="color:#949494;font-size:24px">large grey, 3.03:1</p>
      <div style="background:#1f5fbf"><span style="color:#ffffff">white on blue</span></div>
      <div style="background:rgba(0,0,0,0.1)"><span style="color:#6b6b6b">grey on a tinted box</span></div>
      <svg><text x="0" y="10" fill="#aaaaaa">chart label</text></svg>
      <button disabled style="color:#dddddd">inactive control</button>`);
    expect(await lowContrastText(console.page)).toEqual([
      'p "grey on white, 4.48:1": 4.48:1, needs 4.5:1',
      'span "grey on a tinted box": 4.25:1, needs 4.5:1',
      'text "chart label": 2.32:1, needs 4.5:1',
    ]);
  });

  it('the Overview\'s "Time window" narrows the figures and is kept in the address', async () => {
    const console = await harness.openConsole('tour');
    const page = console.page;
    await console.openSignedIn(harness.masterKey, '/ui/');
    const requests = statCard(page, 'Requests');
    await expect.poll(() => cardNumber(requests, 'Requests')).toBeGreaterThan(100);
    const day = await cardNumber(requests, 'Requests');

    await page.getByLabel('Time window').selectOption({ label: 'Last hour' });
    await page.waitForURL(/[?&]window=1h\b/);
    // The seeded traffic of the last hour: the refusals and the calls just before the present.
    await expect.poll(() => cardNumber(requests, 'Requests')).toBeLessThan(day);
    expect(await cardNumber(requests, 'Requests')).toBeGreaterThan(0);
    await console.screenshot('overview-last-hour');

    await page.reload();
    expect(page.url()).toMatch(/[?&]window=1h\b/);
    await expect.poll(() => page.getByLabel('Time window').inputValue()).toBe('1h');
    expectNoProblems(console);
  });

  it('"Load more" appends the next page of spend records, newest first throughout', async () => {
    const console = await harness.openConsole('tour');
    const page = console.page;
    await console.openSignedIn(harness.masterKey, '/ui/spend');
    const records = page.getByRole('table', { name: 'Spend records', exact: true });
    const rows = records.getByRole('row').filter({ has: page.getByRole('cell') });
    await rows.first().waitFor();
    const firstPage = await rows.count();
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => rows.count()).toBeGreaterThan(firstPage);
    const times = (await columnTexts(records, 'Time')).map((text) => Date.parse(text));
    expect(times.every(Number.isFinite)).toBe(true);
    expect(times.every((time, index) => index === 0 || time <= times[index - 1]!)).toBe(true);
    expectNoProblems(console);
  });

  it('the approval inbox lists the seeded call with its arguments', async () => {
    const console = await harness.openConsole('tour');
    await console.openSignedIn(harness.masterKey, '/ui/mcp/approvals');
    const pending = console.page.getByRole('table', { name: 'Pending approvals', exact: true });
    await pending.getByText(world.pendingApproval.text).first().waitFor();
    expectNoProblems(console);
  });
});
