/**
 * Flows 2–4 (issue 17): an operator creates a key in the console and the `openai` SDK uses it; lowers
 * its RPM limit to 1 and the SDK's second call is a 429 (an invalid limit is refused next to its field);
 * sets a tiny budget and the SDK meets the gateway's budget error, which the Overview then counts;
 * creates an organization, a team with a limit, a user and a key in the console and meets the team's
 * limit; blocks, unblocks and revokes a key. Runs on PostgreSQL + Redis when they are reachable
 * (required with REQUIRE_REAL_BACKENDS=1), else on SQLite.
 */
import OpenAI, { RateLimitError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresBackend, sqliteBackend } from '../support/backends.ts';
import { realBackendsAvailable } from '../support/test-env.ts';
import { type ConsoleHarness, type ConsolePage, startConsoleHarness } from './support/console-harness.ts';
import {
  cardNumber,
  columnTexts,
  describedText,
  expectNoProblems,
  statCard,
  table,
  tabReaches,
} from './support/page-queries.ts';

// Priced, so every answer has a cost a budget can reach (about 2e-4 USD for a short chat).
const models = `
model_list:
  - model_name: demo
    params: { provider: fake, model: demo }
    model_info: { id: demo-fake, input_cost_per_token: 0.00001, output_cost_per_token: 0.00002 }
`;

describe('keys and limits in the console', () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    // Production's storage when the servers are there (limits and budgets counted in Redis's Lua script).
    const production = await realBackendsAvailable();
    harness = await startConsoleHarness({
      yaml: models,
      backend: production ? postgresBackend : sqliteBackend,
    });
  });
  afterAll(async () => {
    await harness?.close();
  });

  const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
  const chat = (key: string, text = 'Hello from the console suite') =>
    sdk(key).chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: text }] });

  async function openKeys(flow: string): Promise<ConsolePage> {
    const console = await harness.openConsole(flow);
    await console.openSignedIn(harness.masterKey, '/ui/identities/keys');
    await console.page.getByRole('heading', { name: 'Keys', exact: true }).waitFor();
    return console;
  }

  /** Creates a key through the "New key" form and returns the secret shown once. */
  async function createKeyInUi(console: ConsolePage, name: string, screenshot?: string): Promise<string> {
    const page = console.page;
    await page.getByRole('button', { name: 'New key' }).click();
    await page.getByRole('heading', { name: 'Create a key' }).waitFor();
    await page.getByLabel('Key name').fill(name);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('dialog', { name: 'Key created' }).waitFor();
    const secret = (await page.getByTestId('new-secret').innerText()).trim();
    if (screenshot) await console.documentationScreenshot(screenshot);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await table(page, 'Keys').getByRole('cell', { name, exact: true }).waitFor();
    return secret;
  }

  /** Opens the key's edit form, sets the labelled fields, saves, and waits for the gateway's answer. */
  async function editKey(console: ConsolePage, name: string, values: Record<string, string>) {
    const page = console.page;
    await page.getByRole('button', { name: `Edit ${name}`, exact: true }).click();
    await page.getByRole('heading', { name: `Edit ${name}`, exact: true }).waitFor();
    for (const [label, value] of Object.entries(values))
      await page.getByLabel(label, { exact: true }).fill(value);
    const saved = page.waitForResponse(
      (response) =>
        /\/ui\/api\/keys\/[^/?]+$/.test(new URL(response.url()).pathname) &&
        response.request().method() !== 'GET',
    );
    await page.getByRole('button', { name: 'Save changes' }).click();
    return saved;
  }

  /** Chooses the option whose text contains `text` (option texts add ids to names: "Initech (org_…)"). */
  async function chooseOption(console: ConsolePage, label: string, text: string): Promise<void> {
    const select = console.page.getByLabel(label, { exact: true });
    const value = await select.locator('option', { hasText: text }).first().getAttribute('value');
    await select.selectOption(value ?? '');
  }

  /** Clicks the tab's "New …" button, fills the labelled fields, submits and waits for the row. */
  async function createInTab(
    console: ConsolePage,
    tab: { link: string; open: string; submit: string; table: string },
    fill: (page: ConsolePage['page']) => Promise<void>,
    rowText: string,
  ): Promise<void> {
    const page = console.page;
    await page.getByRole('link', { name: tab.link, exact: true }).click();
    await page.getByRole('button', { name: tab.open }).click();
    await fill(page);
    await page.getByRole('button', { name: tab.submit }).click();
    await table(page, tab.table).getByText(rowText, { exact: true }).first().waitFor();
    await console.screenshot(tab.table.toLowerCase());
  }

  it('an organization, a team with an RPM limit, a user and a key made in the console: the team limit refuses the second call', async () => {
    const console = await openKeys('identities');
    // "Create user" first asks for the id (POST /users would update an existing user): its 404 means free.
    console.expectConsoleError(/status of 404 .*\/ui\/api\/users\/milton\)$/);
    await createInTab(
      console,
      {
        link: 'Organizations',
        open: 'New organization',
        submit: 'Create organization',
        table: 'Organizations',
      },
      (page) => page.getByLabel('Organization alias').fill('Initech'),
      'Initech',
    );
    await createInTab(
      console,
      { link: 'Teams', open: 'New team', submit: 'Create team', table: 'Teams' },
      async (page) => {
        await page.getByLabel('Team alias').fill('Initech ML');
        await chooseOption(console, 'Organization', 'Initech');
        await page.getByLabel('RPM limit', { exact: true }).fill('1');
      },
      'Initech ML',
    );
    await createInTab(
      console,
      { link: 'Users', open: 'New user', submit: 'Create user', table: 'Users' },
      async (page) => {
        await page.getByLabel('User ID').fill('milton');
        await page.getByLabel('Email').fill('milton@initech.test');
        await page.getByLabel('Role').selectOption({ label: 'Internal user' });
        await chooseOption(console, 'Team', 'Initech ML');
      },
      'milton',
    );
    await console.page.getByRole('link', { name: 'Keys', exact: true }).click();
    await console.page.getByRole('button', { name: 'New key' }).click();
    await chooseOption(console, 'Team', 'Initech ML');
    const page = console.page;
    await page.getByLabel('Key name').fill('ml-pipeline');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-secret').innerText()).trim();
    await page.getByRole('button', { name: 'I have saved it' }).click();

    await page.getByLabel('Search keys').fill('ml-pipe');
    await expect.poll(() => columnTexts(table(page, 'Keys'), 'Name')).toEqual(['ml-pipeline']);
    await console.screenshot('keys-searched');

    await chat(secret);
    const second = await chat(secret).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(RateLimitError);
    expect((second as RateLimitError).code).toBe('team_rpm_exceeded');
    expectNoProblems(console);
  });

  it('creates a key whose secret is shown once and works with the openai SDK', async () => {
    const console = await openKeys('create-key');
    const secret = await createKeyInUi(console, 'console-created', 'key-created');
    expect(secret).toMatch(/^sk-/);
    expect(await console.page.getByTestId('new-secret').count()).toBe(0);

    const answer = await chat(secret);
    expect(answer.choices[0]!.message.content).toBe('You said: Hello from the console suite');
    await console.screenshot('keys');
    expectNoProblems(console);
  });

  it('a key can be created with the keyboard alone: Tab to "New key", Enter, type the name, Enter', async () => {
    const console = await openKeys('keyboard');
    const page = console.page;
    expect(await tabReaches(page, page.getByRole('button', { name: 'New key' }))).toBe(true);
    await page.keyboard.press('Enter');
    const name = page.getByLabel('Key name');
    expect(await tabReaches(page, name)).toBe(true);
    await page.keyboard.type('typed-by-keyboard');
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Key created' }).waitFor();
    expect((await page.getByTestId('new-secret').innerText()).trim()).toMatch(/^sk-/);
    expectNoProblems(console);
  });

  it('an RPM limit of 1 set in the edit form makes the second SDK call a 429; -5 is refused next to the field', async () => {
    const console = await openKeys('rpm-limit');
    // A key with no traffic yet, so its minute window starts with the first call below.
    const secret = await createKeyInUi(console, 'rpm-limited');

    console.expectConsoleError(/status of 400/);
    const refused = await editKey(console, 'rpm-limited', { 'RPM limit': '-5' });
    expect(refused.status()).toBe(400);
    const rpmField = console.page.getByLabel('RPM limit', { exact: true });
    await expect.poll(() => describedText(rpmField)).toMatch(/rpm_limit/);
    expect(await rpmField.getAttribute('aria-invalid')).toBe('true');
    await console.screenshot('key-edit-refused');

    const saved = await editKey(console, 'rpm-limited', { 'RPM limit': '1' });
    expect(saved.ok()).toBe(true);
    await console.screenshot('key-edit-saved');

    await chat(secret);
    const second = await chat(secret).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(RateLimitError);
    expect((second as RateLimitError).status).toBe(429);
    expect((second as RateLimitError).code).toBe('key_rpm_exceeded');
    expectNoProblems(console);
  });

  it('a tiny "Max budget (USD)" is reached: the SDK gets key_budget_exceeded and the Overview counts the rejection', async () => {
    const console = await openKeys('budget');
    const secret = await createKeyInUi(console, 'budgeted');
    const saved = await editKey(console, 'budgeted', { 'Max budget (USD)': '0.0001' });
    expect(saved.ok()).toBe(true);

    let refusal: unknown;
    // One answer costs more than the budget, so the second call is refused; a few more allow for
    // the spend settling just after the answer.
    for (let call = 0; call < 5 && refusal === undefined; call++) {
      await chat(secret).catch((error: unknown) => {
        refusal = error;
      });
    }
    expect(refusal).toBeInstanceOf(RateLimitError);
    expect((refusal as RateLimitError).code).toBe('key_budget_exceeded');
    expect((refusal as RateLimitError).param).toBe('key_budget');

    await console.navigate('Overview');
    await console.page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    const card = statCard(console.page, 'Budget rejections');
    await expect.poll(() => cardNumber(card, 'Budget rejections')).toBeGreaterThanOrEqual(1);
    await console.screenshot('overview');
    expectNoProblems(console);
  });

  it('"Block" refuses the key until "Unblock"; "Revoke" then "Confirm revoke" ends it for good', async () => {
    const console = await openKeys('block-revoke');
    const page = console.page;
    const secret = await createKeyInUi(console, 'short-lived');
    await chat(secret);

    await page.getByRole('button', { name: 'Block short-lived', exact: true }).click();
    await expect
      .poll(() =>
        chat(secret).then(
          () => 'answered',
          (error: { status?: number }) => error.status,
        ),
      )
      .toBe(401);
    await console.screenshot('keys-blocked');
    await page.getByRole('button', { name: 'Unblock short-lived', exact: true }).click();
    await expect
      .poll(() =>
        chat(secret).then(
          () => 'answered',
          (error: { status?: number }) => error.status,
        ),
      )
      .toBe('answered');

    await page.getByRole('button', { name: 'Revoke short-lived', exact: true }).click();
    await page.getByRole('button', { name: 'Confirm revoke' }).click();
    await table(page, 'Keys')
      .getByRole('cell', { name: 'short-lived', exact: true })
      .waitFor({ state: 'detached' });
    await expect
      .poll(() =>
        chat(secret).then(
          () => 'answered',
          (error: { status?: number }) => error.status,
        ),
      )
      .toBe(401);
    expectNoProblems(console);
  });
});
