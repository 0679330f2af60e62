import { defineConfig } from 'vitest/config';
import { CONSOLE_POLL_TIMEOUT_MS } from './test/console/support/timeouts.ts';

// The browser suite (npm run test:console): each file starts one gateway and one headless Chromium and
// drives the console as an operator would, so files run one at a time (two browsers would fight for the
// machine's cores and turn waits into flakes).
export default defineConfig({
  test: {
    include: ['test/console/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll waits for a value the page shows: explicit, for a loaded machine (support/timeouts.ts).
    expect: { poll: { timeout: CONSOLE_POLL_TIMEOUT_MS } },
    pool: 'forks',
    fileParallelism: false,
    globalSetup: ['test/console/support/global-setup.ts'],
  },
});
