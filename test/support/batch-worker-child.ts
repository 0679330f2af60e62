/**
 * `switchboard batch-worker` in a child process, run the way src/main.ts runs it (runBatchWorker, the
 * same flags) but with batches switched on in the loaded configuration: the loader still refuses
 * general_settings.embeddings_batch_enabled (config/inert-settings.ts NOT_BUILT_YET) until the feature
 * is reviewed, as startTestGateway({ batches: true }) does in-process. Once the gate is lifted,
 * spawnBatchWorker runs `src/main.ts batch-worker` and this file goes away.
 * Usage: node test/support/batch-worker-child.ts --config FILE [--health-port N]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runBatchWorker } from '../../src/batch-worker-command.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { createLogger } from '../../src/observability/logger.ts';

const { values } = parseArgs({
  options: { config: { type: 'string' }, 'health-port': { type: 'string' } },
});
const path = values.config!;
const parsed = parseConfig(readFileSync(path, 'utf8'), {
  path,
  env: process.env,
  dataDir: '/nonexistent',
  source: path,
});
const config = {
  ...parsed,
  general_settings: { ...parsed.general_settings, embeddings_batch_enabled: true },
};
await runBatchWorker({
  config,
  masterKey: config.general_settings.master_key ?? 'sk-batch-worker-child',
  logger: createLogger({ level: process.env.LOG_LEVEL ?? 'warn' }),
  healthPort: values['health-port'] === undefined ? undefined : Number(values['health-port']),
  host: '127.0.0.1',
});
