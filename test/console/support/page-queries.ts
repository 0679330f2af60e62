/**
 * Questions the flows ask of a console page through what a person (or a screen reader) perceives:
 * a field's description, a card's value, a table's rows, whether focus can reach a control.
 */
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { ConsolePage } from './console-harness.ts';

// The few DOM shapes the in-page functions use (the gateway's TypeScript project has no DOM library).
interface PageElement {
  tagName: string;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  closest(selector: string): PageElement | null;
  focus(): void;
}
interface FormControl extends PageElement {
  type: string;
  name: string;
  title: string;
  labels: { length: number } | null;
}
interface PageDocument {
  body: PageElement;
  activeElement: unknown;
  getElementById(id: string): { textContent: string | null } | null;
  querySelectorAll(selector: string): ArrayLike<FormControl>;
}

/** The text the control's aria-describedby points at (its hint and its error). */
export function describedText(control: Locator): Promise<string> {
  return control.evaluate((element: PageElement) => {
    const document = (globalThis as unknown as { document: PageDocument }).document;
    return (element.getAttribute('aria-describedby') ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' ');
  });
}

/** A stat card named by its label: a region (section aria-labelledby) or a figure with a caption. */
export function statCard(page: Page, label: string): Locator {
  return page
    .getByRole('region', { name: label, exact: true })
    .or(page.getByRole('figure', { name: label, exact: true }));
}

/** The first number in a card's text after its label ("Budget rejections 3" → 3). */
export async function cardNumber(card: Locator, label: string): Promise<number> {
  const text = (await card.innerText()).replace(label, '');
  const match = /-?\d[\d,]*(\.\d+)?/.exec(text);
  if (!match) throw new Error(`the "${label}" card shows no number: ${JSON.stringify(text)}`);
  return Number(match[0].replaceAll(',', ''));
}

export function table(page: Page, caption: string): Locator {
  return page.getByRole('table', { name: caption, exact: true });
}

/** The table's body rows (rows that hold cells, not only column headers). */
export function bodyRows(tableLocator: Locator): Locator {
  return tableLocator.getByRole('row').filter({ has: tableLocator.page().getByRole('cell') });
}

/** The text of every cell in the named column, one entry per body row. */
export async function columnTexts(tableLocator: Locator, column: string): Promise<string[]> {
  const headers = await tableLocator.getByRole('columnheader').allInnerTexts();
  const index = headers.findIndex((header) => header.trim() === column);
  if (index < 0) throw new Error(`no column "${column}" (columns: ${headers.join(', ')})`);
  const rows = await bodyRows(tableLocator).all();
  return Promise.all(rows.map((row) => row.getByRole('cell').nth(index).innerText()));
}

/** Presses Tab from the top of the page until `target` has focus; false if it never gets it. */
export async function tabReaches(page: Page, target: Locator, maxPresses = 80): Promise<boolean> {
  // Focus the body: the next Tab goes to the first focusable element, as after a page load.
  await page.evaluate(() => {
    const { body } = (globalThis as unknown as { document: PageDocument }).document;
    body.setAttribute('tabindex', '-1');
    body.focus();
    body.removeAttribute('tabindex');
  });
  for (let press = 0; press < maxPresses; press++) {
    await page.keyboard.press('Tab');
    const focused = await target.evaluate(
      (element: PageElement) =>
        element === (globalThis as unknown as { document: PageDocument }).document.activeElement,
    );
    if (focused) return true;
  }
  return false;
}

/**
 * Form controls a screen reader would announce without a name: inputs, selects and text areas with
 * neither a <label>, aria-label, aria-labelledby nor title. Returns a short description of each.
 */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(
      (globalThis as unknown as { document: PageDocument }).document.querySelectorAll(
        'input, select, textarea',
      ),
    )
      .filter((element) => element.type !== 'hidden' && !element.closest('[aria-hidden="true"]'))
      .filter(
        (element) =>
          (element.labels?.length ?? 0) === 0 &&
          !element.getAttribute('aria-label')?.trim() &&
          !element.getAttribute('aria-labelledby') &&
          !element.title,
      )
      .map((element) => `${element.tagName.toLowerCase()}[name=${element.name}][type=${element.type}]`),
  );
}

/** Buttons and links with nothing to announce: no text, aria-label, aria-labelledby or title. */
export function unnamedButtonsAndLinks(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(
      (globalThis as unknown as { document: PageDocument }).document.querySelectorAll('button, a[href]'),
    )
      .filter((element) => !element.closest('[aria-hidden="true"]'))
      .filter(
        (element) =>
          !(element as unknown as { textContent: string | null }).textContent?.trim() &&
          !element.getAttribute('aria-label')?.trim() &&
          !element.getAttribute('aria-labelledby') &&
          !element.title,
      )
      .map((element) => element.tagName.toLowerCase()),
  );
}

/** How far the page is wider than the window (0 when nothing makes the whole page scroll sideways). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const view = globalThis as unknown as {
      innerWidth: number;
      document: { documentElement: { scrollWidth: number } };
    };
    return Math.max(0, view.document.documentElement.scrollWidth - view.innerWidth);
  });
}

/** Fails the flow on console errors, page errors and failed requests it did not declare. */
export function expectNoProblems(consolePage: ConsolePage): void {
  expect(consolePage.unexpectedProblems()).toEqual([]);
}
