import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Most files wait on what they drive (gateway processes, upstream latency, the databases) rather
    // than compute: with one worker per core a 2-core CI machine sat 40 % idle and the suite took ~25
    // minutes. Four workers keep the cores busy; every file isolates its schema, key prefix and ports.
    maxWorkers: 4,
    projects: [
      {
        test: {
          name: 'gateway',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
          // The fault suite, the soak and the browser suite run on their own (npm run test:faults, npm run
          // soak, npm run test:console): they measure recovery and resource slopes or drive a browser, which
          // the main suite's parallel files would disturb.
          exclude: ['**/node_modules/**', 'test/faults/**', 'test/soak/**', 'test/console/**'],
          // Limits on a hung test, not speed checks: a test that starts gateway processes itself can take
          // 20 s on a loaded CI machine with four workers.
          testTimeout: 60_000,
          hookTimeout: 90_000,
          pool: 'forks',
        },
      },
      // The console's component tests (jsdom).
      'ui/vitest.config.ts',
    ],
  },
});
