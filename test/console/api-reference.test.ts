/**
 * The API reference in a real browser (issue 25): /redoc, which loaded an unpinned script from a CDN
 * on the console's origin, leads to the Swagger UI at /docs, which renders the gateway's OpenAPI
 * document from this origin's own files under its Content-Security-Policy: no request leaves the
 * origin, and the browser reports no violation of the policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleHarness, startConsoleHarness } from './support/console-harness.ts';
import { expectNoProblems } from './support/page-queries.ts';

describe('the API reference', () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsoleHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('renders from this origin only, under its CSP, when opened at /redoc', async () => {
    const page = await harness.openConsole('api-reference');
    const violations: string[] = [];
    page.page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const answer = await page.goto('/redoc');
    expect(new URL(page.page.url()).pathname).toBe('/docs');
    expect(answer!.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.page
      .getByRole('heading', { name: /Switchboard/ })
      .first()
      .waitFor();
    await page.page.getByText('/v1/chat/completions').first().waitFor();
    const origin = new URL(harness.baseUrl).origin;
    const elsewhere = page.requestedUrls.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'));
    expect(elsewhere).toEqual([]);
    expect(violations).toEqual([]);
    expectNoProblems(page);
  });
});
