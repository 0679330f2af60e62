/**
 * One browser-suite file's world: a real gateway (in this process; SQLite + in-memory store unless the
 * file asks for PostgreSQL + Redis) serving the run's console build at /ui, and one headless Chromium.
 * Each test opens its own browser context (its own sessionStorage) through `openConsole`, which records
 * every request the page makes and every console error, and saves screenshots under
 * test-results/console.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page, type Response } from 'playwright-core';
import { inject, onTestFailed } from 'vitest';
import type { Clock } from '../../../src/lib/clock.ts';
import { type Backend, sqliteBackend } from '../../support/backends.ts';
import { startTestGateway, type TestGateway } from '../../support/start-gateway.ts';
import { chromiumPath } from './global-setup.ts';
import { CONSOLE_ACTION_TIMEOUT_MS } from './timeouts.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const SCREENSHOT_DIR = join(root, 'test-results', 'console');
const DOCS_SCREENSHOT_DIR = join(root, 'docs', 'console');
/** A laptop screen: the console must work at this size, and the curated screenshots are taken at it. */
export const VIEWPORT = { width: 1366, height: 850 };
const DOCS_MAX_HEIGHT = 1700;

export interface HarnessOptions {
  /** Where the gateway keeps its data (default: the embedded SQLite + in-memory store). */
  backend?: () => Backend;
  /** The gateway's model_list YAML (default: the `demo` group on the fake provider). */
  yaml?: string;
  clock?: Clock;
}

export interface ConsoleHarness {
  gateway: TestGateway;
  baseUrl: string;
  masterKey: string;
  /** A new browser context and page on the console, recording requests and console errors. */
  openConsole(flow: string): Promise<ConsolePage>;
  close(): Promise<void>;
}

export async function startConsoleHarness(options: HarnessOptions = {}): Promise<ConsoleHarness> {
  const backend: Backend = (options.backend ?? sqliteBackend)();
  const gateway = await startTestGateway({
    backend,
    ...(options.yaml ? { yaml: options.yaml } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    consoleDistDir: inject('consoleDistDir'),
  });
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({
      executablePath: chromiumPath(),
      headless: true,
      // This machine's network is closed: Chromium's own background connections only fail and slow it.
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
    });
  } catch (error) {
    await gateway.close();
    await backend.cleanup();
    throw error;
  }
  const pages: ConsolePage[] = [];
  const launched = browser;
  return {
    gateway,
    baseUrl: gateway.baseUrl,
    masterKey: gateway.masterKey,
    async openConsole(flow) {
      const page = await ConsolePage.open(launched, gateway.baseUrl, flow);
      pages.push(page);
      // What the page showed when the test failed, next to the flow's other screenshots.
      onTestFailed(async () => {
        await page.screenshot('failed').catch(() => {});
      });
      return page;
    },
    async close() {
      for (const page of pages) await page.close().catch(() => {});
      await launched.close();
      await gateway.close();
      await backend.cleanup();
    },
  };
}

/** A console tab of its own, with what it requested and what it complained about. */
export class ConsolePage {
  readonly page: Page;
  readonly flow: string;
  /** Every URL the page requested (documents, scripts, API calls). */
  readonly requestedUrls: string[] = [];
  private readonly context: BrowserContext;
  private readonly baseUrl: string;
  private readonly problems: string[] = [];
  private readonly expectedProblems: RegExp[] = [];

  private constructor(context: BrowserContext, page: Page, baseUrl: string, flow: string) {
    this.context = context;
    this.page = page;
    this.baseUrl = baseUrl;
    this.flow = flow;
  }

  static async open(browser: Browser, baseUrl: string, flow: string): Promise<ConsolePage> {
    const context = await browser.newContext({ viewport: VIEWPORT, reducedMotion: 'reduce' });
    context.setDefaultTimeout(CONSOLE_ACTION_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(CONSOLE_ACTION_TIMEOUT_MS);
    const page = await context.newPage();
    const consolePage = new ConsolePage(context, page, baseUrl, flow);
    page.on('request', (request) => consolePage.requestedUrls.push(request.url()));
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // A failed fetch is logged without its address in the text; the location names it.
      const where = message.location().url;
      consolePage.problems.push(`console error: ${message.text()}${where ? ` (${where})` : ''}`);
    });
    page.on('pageerror', (error) => consolePage.problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => {
      const reason = request.failure()?.errorText;
      // Sections' files are fetched on first use; a reload or page load meanwhile cancels those still
      // arriving (ERR_ABORTED), which is the browser's doing, not a failure. A missing file is a 404.
      if (reason === 'net::ERR_ABORTED' && new URL(request.url()).pathname.startsWith('/ui/assets/')) return;
      consolePage.problems.push(`request failed: ${request.url()} (${reason})`);
    });
    return consolePage;
  }

  /**
   * A console error this flow causes on purpose (Chromium logs every 4xx answer to fetch as an error,
   * so a flow that submits a wrong key or an invalid value names the status it expects).
   */
  expectConsoleError(pattern: RegExp): void {
    this.expectedProblems.push(pattern);
  }

  /** Console errors, page errors and failed requests not declared with expectConsoleError. */
  unexpectedProblems(): string[] {
    return this.problems.filter((problem) => !this.expectedProblems.some((pattern) => pattern.test(problem)));
  }

  /** Loads a console address; answers the document's response (its headers). */
  async goto(path: string): Promise<Response | null> {
    return this.page.goto(this.baseUrl + path);
  }

  /** Signs in on the sign-in page and waits for the shell (its "Sign out" button). */
  async signIn(key: string): Promise<void> {
    await this.page.getByLabel('Admin key').fill(key);
    await this.page.getByRole('button', { name: 'Sign in' }).click();
    await this.page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  /** Opens the console at `path` and signs in there. */
  async openSignedIn(key: string, path = '/ui/'): Promise<void> {
    await this.goto(path);
    await this.signIn(key);
  }

  /** Follows a link of the console's main navigation ("Overview", "Models", "Keys & identities", …). */
  async navigate(section: string): Promise<void> {
    await this.page
      .getByRole('navigation', { name: 'Console sections' })
      .getByRole('link', { name: section, exact: true })
      .click();
  }

  /** Full-page screenshot into test-results/console/<flow>-<name>.png (gitignored). */
  async screenshot(name: string): Promise<void> {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await this.page.screenshot({ path: join(SCREENSHOT_DIR, `${this.flow}-${name}.png`), fullPage: true });
  }

  /** With UPDATE_CONSOLE_SCREENSHOTS=1, also the documentation's picture of this page (docs/console). */
  async documentationScreenshot(name: string): Promise<void> {
    await this.screenshot(name);
    if (process.env.UPDATE_CONSOLE_SCREENSHOTS !== '1') return;
    mkdirSync(DOCS_SCREENSHOT_DIR, { recursive: true });
    // At least the laptop screen, and the whole page down to a bound, so a long table does not make a
    // picture no reader scrolls through.
    const height = await this.page.evaluate(
      () =>
        (globalThis as unknown as { document: { body: { scrollHeight: number } } }).document.body
          .scrollHeight,
    );
    await this.page.screenshot({
      path: join(DOCS_SCREENSHOT_DIR, `${name}.png`),
      fullPage: true,
      clip: {
        x: 0,
        y: 0,
        width: VIEWPORT.width,
        height: Math.min(Math.max(height, VIEWPORT.height), DOCS_MAX_HEIGHT),
      },
    });
  }

  async close(): Promise<void> {
    await this.context.close();
  }
}
