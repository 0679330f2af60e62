/**
 * Flow 1, signing in (issue 17): a wrong key is refused under the "Admin key" field and nothing is kept;
 * the master key opens the console, survives a reload (sessionStorage), and "Sign out" forgets it; the
 * key never appears in a URL the browser requested; the sections' code is fetched only after signing in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleHarness, startConsoleHarness } from './support/console-harness.ts';
import { describedText, expectNoProblems } from './support/page-queries.ts';

describe('console sign-in', () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsoleHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  const storedValues = (console: Awaited<ReturnType<ConsoleHarness['openConsole']>>) =>
    console.page.evaluate(() => Object.values(sessionStorage));

  it('refuses a wrong key under the field, keeps the right one for the tab only, and never puts it in a URL', async () => {
    const console = await harness.openConsole('sign-in');
    console.expectConsoleError(/status of 401/);
    const documentAnswer = await console.goto('/ui/');
    const headers = documentAnswer!.headers();
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['cache-control']).toBe('no-cache');
    const keyField = console.page.getByLabel('Admin key');
    await console.documentationScreenshot('sign-in');
    // Sections are fetched on first use: sign-in has not downloaded the Overview or the chart library.
    const sectionChunks = () =>
      console.requestedUrls.filter((url) => /\/assets\/(overview-page|charts)-[^/]*\.js$/.test(url));
    expect(sectionChunks()).toEqual([]);

    await keyField.fill('sk-not-a-key-of-this-gateway');
    await console.page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => describedText(keyField)).toMatch(/not accepted/i);
    expect(await keyField.getAttribute('aria-invalid')).toBe('true');
    expect(await storedValues(console)).toEqual([]);
    await console.screenshot('sign-in-refused');

    const sessionAnswer = console.page.waitForResponse((response) =>
      response.url().endsWith('/ui/api/session'),
    );
    await console.signIn(harness.masterKey);
    // Administrators' data is not kept by the browser's cache.
    expect((await sessionAnswer).headers()['cache-control']).toBe('no-store');
    await expect.poll(() => console.page.getByTestId('actor').innerText()).toMatch(/master/i);
    expect(await storedValues(console)).toEqual([harness.masterKey]);
    expect(sectionChunks().length, 'the Overview and its charts were fetched after signing in').toBe(2);
    await console.screenshot('overview');

    await console.page.reload();
    await console.page.getByRole('button', { name: 'Sign out' }).waitFor();
    await expect.poll(() => console.page.getByTestId('actor').innerText()).toMatch(/master/i);

    await console.page.getByRole('button', { name: 'Sign out' }).click();
    await keyField.waitFor();
    expect(await storedValues(console)).toEqual([]);
    await console.page.reload();
    await keyField.waitFor();
    expect(await console.page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);

    const apiCalls = console.requestedUrls.filter((url) => url.includes('/ui/api/'));
    expect(apiCalls.length).toBeGreaterThan(0);
    for (const url of console.requestedUrls) {
      expect(url).not.toContain(harness.masterKey);
      expect(decodeURIComponent(url)).not.toContain(harness.masterKey);
      expect(url).not.toContain('sk-not-a-key-of-this-gateway');
    }
    expectNoProblems(console);
  });

  it('refuses the valid key of a user who is not an administrator, saying so under the field', async () => {
    const callerKey = await harness.gateway.createKey({ key_name: 'plain-caller' });
    const console = await harness.openConsole('sign-in-not-admin');
    console.expectConsoleError(/status of 403/);
    await console.goto('/ui/');
    const keyField = console.page.getByLabel('Admin key');
    await keyField.fill(callerKey);
    await console.page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => describedText(keyField)).toMatch(/not an administrator key/i);
    expect(await storedValues(console)).toEqual([]);
    expectNoProblems(console);
  });
});
