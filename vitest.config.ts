import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'gateway',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
          // The fault suite, the soak and the browser suite run on their own (npm run test:faults, npm run
          // soak, npm run test:console): they measure recovery and resource slopes or drive a browser, which
          // the main suite's parallel files would disturb.
          exclude: ['**/node_modules/**', 'test/faults/**', 'test/soak/**', 'test/console/**'],
          testTimeout: 20_000,
          hookTimeout: 30_000,
          pool: 'forks',
        },
      },
      // The console's component tests (jsdom).
      'ui/vitest.config.ts',
    ],
  },
});
