/**
 * How long a browser flow waits for something it expects (an element, a navigation, a polled value)
 * before failing, in one place for the whole browser suite (issue 31). Chosen for a loaded machine: a
 * CI runner where the gateway, Chromium and other test runs share two cores renders a page in seconds,
 * not in the milliseconds of an idle laptop, and the defaults (Playwright's 30 s for actions but 5 s for
 * assertions, vitest's 1 s for expect.poll) made the suite's pass depend on the machine. These are
 * failure guards for an event that never comes, never a measure of speed; a flow never sleeps them.
 */

/** Playwright actions, locator waits and navigations (context.setDefaultTimeout). */
export const CONSOLE_ACTION_TIMEOUT_MS = 15_000;

/** vitest's expect.poll in the browser flows (vitest.console.config.ts), e.g. a card's number. */
export const CONSOLE_POLL_TIMEOUT_MS = 15_000;
