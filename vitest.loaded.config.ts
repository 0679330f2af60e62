import { defineConfig, mergeConfig } from 'vitest/config';
import main from './vitest.config.ts';

// The unit tests under load (npm run test:loaded runs `vitest run src` on this config, the files of
// `npm run test:unit`): the main config with one CPU-spinning child process per core, started before the
// first file and stopped after the last (test/support/cpu-burner-global-setup.ts). The unit tests must
// pass on a machine with no idle core: they assert event order and move injected or fake clocks, never
// wall-clock bounds that a busy CI runner stretches.
export default mergeConfig(
  main,
  defineConfig({ test: { globalSetup: ['test/support/cpu-burner-global-setup.ts'] } }),
);
