import { defineConfig } from 'vitest/config';

// The fault suite (npm run test:faults): scenarios kill and restart servers under load and measure how
// long recovery takes, so files run one at a time to keep the measurements free of each other's load.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    globalSetup: ['test/faults/support/render-fault-report.ts'],
    reporters: ['default', './test/faults/support/fault-report-reporter.ts'],
  },
});
