/** Component tests of the console: jsdom, Testing Library; run by the root `vitest run` as a project. */
import react from '@vitejs/plugin-react';
import { defineProject } from 'vitest/config';

export default defineProject({
  root: import.meta.dirname,
  plugins: [react()],
  test: {
    name: 'console',
    environment: 'jsdom',
    include: ['src/**/*.test.tsx', 'src/**/*.test.ts'],
    setupFiles: ['./src/test-setup.ts'],
    // Explicit, chosen for a loaded machine (npm run test:loaded spins every core): a test that types,
    // renders and waits for held answers takes a second or two when cores are busy, and vitest's 5 s
    // default failed two of them under load. A timeout guards a hung test; no test measures speed.
    testTimeout: 20_000,
  },
});
