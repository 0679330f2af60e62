import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
    // The fault suite and the soak run on their own (npm run test:faults, npm run soak): they measure
    // recovery and resource slopes, which the main suite's parallel files would disturb.
    exclude: ['**/node_modules/**', 'test/faults/**', 'test/soak/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
