/**
 * Spend & audit (issue 17): an operator filters the spend records to failed requests and exports exactly
 * those as CSV, groups the spend by model, and exports the audit log that records the key they were
 * made with.
 */
import { readFile } from 'node:fs/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../support/mcp-fixtures.ts';
import { type ConsoleHarness, type ConsolePage, startConsoleHarness } from './support/console-harness.ts';
import { bodyRows, columnTexts, expectNoProblems, table } from './support/page-queries.ts';

const models = `
model_list:
  - model_name: demo
    params: { provider: fake, model: demo }
    model_info: { id: demo-fake, input_cost_per_token: 0.00001, output_cost_per_token: 0.00002 }
  - model_name: broken
    params: { provider: fake, model: broken, fail_rate: 1, fail_status: 500 }
    model_info: { id: broken-fake }
router_settings:
  num_retries: 0
`;

describe('spend and audit in the console', () => {
  let harness: ConsoleHarness;
  let keyId: string;

  beforeAll(async () => {
    harness = await startConsoleHarness({ yaml: models });
    const key = await createKey(harness.gateway, { key_name: 'reporting' });
    keyId = key.keyId;
    const client = new OpenAI({ apiKey: key.key, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
    for (const model of ['demo', 'demo', 'demo', 'broken', 'broken']) {
      await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'Quarterly numbers' }] })
        .catch(() => undefined);
    }
  });
  afterAll(async () => {
    await harness?.close();
  });

  /** Clicks the page's "Export CSV" and returns the saved file's lines (header first). */
  async function exportCsv(console: ConsolePage): Promise<string[]> {
    const download = console.page.waitForEvent('download');
    await console.page.getByRole('button', { name: 'Export CSV' }).click();
    const saved = await download;
    expect(saved.suggestedFilename()).toMatch(/\.csv$/);
    const text = await readFile(await saved.path(), 'utf8');
    return text.split(/\r?\n/).filter((line) => line.trim() !== '');
  }

  it('"Status: Failed" narrows the records and the CSV export to the failed requests', async () => {
    const console = await harness.openConsole('spend');
    const page = console.page;
    await console.openSignedIn(harness.masterKey, '/ui/spend');
    const records = table(page, 'Spend records');
    await bodyRows(records).nth(4).waitFor();

    await page.getByLabel('Status', { exact: true }).selectOption({ label: 'Failed' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => bodyRows(records).count()).toBe(2);
    expect(await columnTexts(records, 'Model')).toEqual(['broken', 'broken']);
    await console.screenshot('spend-failed');

    const lines = await exportCsv(console);
    expect(lines).toHaveLength(3);
    expect(lines.slice(1).every((line) => line.includes('broken') && line.includes(keyId))).toBe(true);
    expect(lines.slice(1).some((line) => line.includes('demo'))).toBe(false);
    await page
      .getByRole('status')
      .filter({ hasText: /Saved .*\.csv \(2 rows\)/ })
      .waitFor();
    expectNoProblems(console);
  });

  it('"Group by: Model" totals the requests per model, failures counted', async () => {
    const console = await harness.openConsole('spend-by-model');
    const page = console.page;
    await console.openSignedIn(harness.masterKey, '/ui/spend');
    await page.getByLabel('Group by', { exact: true }).selectOption({ label: 'Model' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const summary = table(page, 'Spend summary');
    await expect.poll(() => columnTexts(summary, 'Model').catch(() => [])).toEqual(['demo', 'broken']);
    expect(await columnTexts(summary, 'Requests')).toEqual(['3', '2']);
    expect(await columnTexts(summary, 'Failed')).toEqual(['0', '2']);
    await console.screenshot('spend-by-model');
    expectNoProblems(console);
  });

  it('the audit log lists the key creation and exports it as CSV', async () => {
    const console = await harness.openConsole('audit');
    const page = console.page;
    await console.openSignedIn(harness.masterKey, '/ui/spend/audit');
    const log = table(page, 'Audit log');
    await bodyRows(log).filter({ hasText: keyId }).first().waitFor();
    await console.screenshot('audit');

    const lines = await exportCsv(console);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.some((line) => line.includes(keyId) && line.includes('master'))).toBe(true);
    expectNoProblems(console);
  });
});
