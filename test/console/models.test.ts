/**
 * Flow 8 (issue 17): after upstream failures the Models page shows the group, its deployment cooling
 * down, and the fallback event that moved the request to another group.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type ConsoleHarness, startConsoleHarness } from './support/console-harness.ts';
import { bodyRows, columnTexts, expectNoProblems, table } from './support/page-queries.ts';

describe('models and deployments in the console', () => {
  let harness: ConsoleHarness;
  let upstream: FakeOpenAiServer;

  beforeAll(async () => {
    // A real OpenAI-compatible upstream that answers 500: one failure cools the deployment
    // down for five minutes, and the request falls back to the healthy `steady` group.
    upstream = await FakeOpenAiServer.start();
    upstream.defaultScenario = { kind: 'error', status: 500, message: 'upstream exploded' };
    harness = await startConsoleHarness({
      yaml: `
model_list:
  - model_name: flaky
    params: { provider: openai, model: gpt-flaky, api_base: "${upstream.baseUrl}", api_key: sk-upstream-fake }
    model_info: { id: flaky-primary }
  - model_name: steady
    params: { provider: fake, model: steady }
    model_info: { id: steady-fake }
router_settings:
  num_retries: 0
  allowed_fails: 1
  cooldown_time: 300
  fallbacks: [{ flaky: [steady] }]
`,
    });
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it('shows the failing deployment "Cooling down until …" and the fallback event to the healthy group', async () => {
    const client = new OpenAI({ apiKey: harness.masterKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'flaky',
      messages: [{ role: 'user', content: 'Are you there?' }],
    });
    expect(answer.choices[0]!.message.content).toBe('You said: Are you there?');
    expect(upstream.requests.length).toBeGreaterThanOrEqual(1);

    const console = await harness.openConsole('models');
    const page = console.page;
    await console.openSignedIn(harness.masterKey, '/ui/models');
    await page.getByRole('heading', { name: 'Models and deployments', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'flaky', exact: true }).waitFor();
    await page.getByRole('heading', { name: 'steady', exact: true }).waitFor();

    const flakyDeployments = table(page, 'Deployments of flaky');
    await flakyDeployments
      .getByText(/Cooling down until/)
      .first()
      .waitFor();
    expect(await columnTexts(flakyDeployments, 'Status')).toEqual([
      expect.stringMatching(/^Cooling down until /),
    ]);
    expect(await columnTexts(table(page, 'Deployments of steady'), 'Status')).toEqual(['Healthy']);

    await page.getByRole('heading', { name: 'Recent fallback events' }).waitFor();
    const events = bodyRows(table(page, 'Fallback events'));
    await events.first().waitFor();
    const eventText = await events.first().innerText();
    expect(eventText).toContain('flaky');
    expect(eventText).toContain('steady');
    expect(eventText).toContain('500');
    await console.screenshot('models');
    expectNoProblems(console);
  });
});
