/**
 * The `switchboard` command: parses flags (with environment equivalents), loads the configuration,
 * bootstraps the master key, runs `serve` (optionally as N cluster workers), `batch-worker` or
 * `migrate`, and drains in-flight requests on SIGTERM. Signals are handled from the first instruction
 * (process-lifecycle.ts): a stop during start-up exits promptly. The only place besides config/ that
 * reads process.env.
 */
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { batchWorkerRefusal, runBatchWorker } from './batch-worker-command.ts';
import { type Config, isPostgresUrl } from './config/config.ts';
import { ConfigError } from './config/config-error.ts';
import { loadConfig } from './config/load-config.ts';
import { createGateway } from './gateway.ts';
import { VERSION } from './http/app.ts';
import { judgeMasterKey } from './identity/master-key-rule.ts';
import { ensurePrivateFile, ensurePrivateFolder } from './lib/private-files.ts';
import { createLogger, type Logger } from './observability/logger.ts';
import { ProcessLifecycle } from './process-lifecycle.ts';
import { builtinProviders } from './providers/builtin-providers.ts';
import { deploymentProblems } from './routing/model-registry.ts';
import { DatabaseUnreachableError } from './store/db/database-unreachable.ts';
import { migrateDatabase } from './store/db/open-database.ts';

const HELP = `Switchboard ${VERSION}: an OpenAI-compatible AI gateway.

Usage:
  switchboard [serve] [options]    run the gateway (the default command)
  switchboard migrate [options]    apply database migrations and exit
  switchboard batch-worker [options]  run only the batch worker (no HTTP API; exits 2
                                   when general_settings.embeddings_batch_enabled is off)
  switchboard --help               show this help

Options (each has an environment variable; the flag wins):
  --config PATH     YAML configuration file                       GATEWAY_CONFIG
                    (default: the embedded default: SQLite in the data folder,
                    in-process counters, and a 'demo' model on the fake provider)
  --port N          port to listen on (default 4000)              PORT
  --host HOST       address to listen on (default 127.0.0.1)      HOST
  --workers N       worker processes sharing the port (default 1) GATEWAY_WORKERS
  --data-dir DIR    folder for the embedded default's files       GATEWAY_DATA_DIR
                    (default ./.switchboard)
  --batch-worker on|off  run the batch worker in this process      GATEWAY_BATCH_WORKER
                    (default on; only when general_settings.embeddings_batch_enabled)
  --health-port N   batch-worker only: serve /health/* and /metrics GATEWAY_HEALTH_PORT
                    on this port and --host (default: no listener)
  --log-level LVL   fatal, error, warn, info, debug, trace        LOG_LEVEL
                    (default info)
  -h, --help        show this help

Other environment variables:
  GATEWAY_MASTER_KEY   the master key when general_settings.master_key is not set;
                       without either, one is generated on first start and kept in
                       the data folder (printed once)

Docs: README.md and docs/ (configuration, API, limits, MCP, operations).`;

interface CliOptions {
  command: 'serve' | 'migrate' | 'batch-worker';
  configPath: string | undefined;
  port: number;
  host: string;
  workers: number;
  dataDir: string;
  logLevel: string;
  /** Run the batch worker in this process (when batches are enabled). */
  batchWorker: boolean;
  /** batch-worker: port of its health listener, if any. */
  healthPort: number | undefined;
}

function parseCli(argv: string[], env: NodeJS.ProcessEnv): CliOptions | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      workers: { type: 'string' },
      'data-dir': { type: 'string' },
      'log-level': { type: 'string' },
      'batch-worker': { type: 'string' },
      'health-port': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const command = positionals[0] ?? 'serve';
  if (command !== 'serve' && command !== 'migrate' && command !== 'batch-worker')
    throw new UsageError(`unknown command '${command}'`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  return {
    command,
    configPath: values.config ?? (env.GATEWAY_CONFIG || undefined),
    port: integerOption('--port', values.port ?? env.PORT ?? '4000', 0, 65_535),
    host: values.host ?? env.HOST ?? '127.0.0.1',
    workers: integerOption('--workers', values.workers ?? env.GATEWAY_WORKERS ?? '1', 1, 256),
    dataDir: resolve(values['data-dir'] ?? env.GATEWAY_DATA_DIR ?? '.switchboard'),
    logLevel: values['log-level'] ?? env.LOG_LEVEL ?? 'info',
    batchWorker: onOff('--batch-worker', values['batch-worker'] ?? env.GATEWAY_BATCH_WORKER ?? 'on'),
    healthPort: optionalPort(values['health-port'] ?? (env.GATEWAY_HEALTH_PORT || undefined)),
  };
}

class UsageError extends Error {}

function onOff(name: string, value: string): boolean {
  if (value === 'on' || value === 'off') return value === 'on';
  throw new UsageError(`${name} must be on or off (got '${value}')`);
}

function optionalPort(value: string | undefined): number | undefined {
  return value === undefined ? undefined : integerOption('--health-port', value, 0, 65_535);
}

function integerOption(name: string, value: string, min: number, max: number): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw new UsageError(`${name} must be an integer from ${min} to ${max} (got '${value}')`);
  }
  return number;
}

/** The master key: configured, from GATEWAY_MASTER_KEY, or generated once into the data folder. */
function resolveMasterKey(
  config: Config,
  options: CliOptions,
  env: NodeJS.ProcessEnv,
): { key: string; generated: boolean } {
  const configured = config.general_settings.master_key ?? env.GATEWAY_MASTER_KEY;
  if (configured) {
    const source = config.general_settings.master_key ? 'general_settings.master_key' : 'GATEWAY_MASTER_KEY';
    const verdict = judgeMasterKey(configured, source, options.host);
    if (verdict.kind === 'refuse') throw new UsageError(verdict.message);
    if (verdict.kind === 'warn' && cluster.isPrimary)
      process.stderr.write(`switchboard: warning: ${verdict.message}\n`);
    return { key: configured, generated: false };
  }
  const file = join(options.dataDir, 'master.key');
  if (existsSync(file)) {
    if (ensurePrivateFile(file)) process.stderr.write(`switchboard: made ${file} private (0600)\n`);
    return { key: readFileSync(file, 'utf8').trim(), generated: false };
  }
  ensurePrivateFolder(options.dataDir);
  const key = `sk-master-${randomBytes(24).toString('base64url')}`;
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { key, generated: true };
}

function printMasterKey(key: string, options: CliOptions): void {
  const base = `http://${options.host}:${options.port}`;
  process.stdout.write(
    `\nGenerated a master key (stored in ${join(options.dataDir, 'master.key')}; shown only now):\n\n  ${key}\n\n` +
      `Create an API key:\n\n  curl -s ${base}/ui/api/keys -H 'Authorization: Bearer ${key}' ` +
      `-H 'Content-Type: application/json' -d '{"key_name":"my-first-key"}'\n\n`,
  );
}

/** Migrates the main database and spend's telemetry database when it is another one. */
async function migrate(config: Config, logger: Logger, signal: AbortSignal): Promise<void> {
  const general = config.general_settings;
  const targets: Array<[string, string]> = [['general_settings.database_url', general.database_url]];
  if (general.telemetry_database_url !== general.database_url)
    targets.push(['general_settings.telemetry_database_url', general.telemetry_database_url]);
  for (const [setting, url] of targets) {
    const report = await migrateDatabase(url, {
      logger,
      signal,
      migrationLockTimeoutMs: general.database_migration_lock_timeout_ms,
    }).catch((error: unknown) => {
      throw signal.aborted ? error : new DatabaseUnreachableError(url, error, setting);
    });
    logger.info(
      { database: setting, applied: report.applied },
      report.applied.length ? 'migrations applied' : 'database is up to date',
    );
  }
}

async function serveWorker(
  config: Config,
  options: CliOptions,
  masterKey: string,
  logger: Logger,
  migrateAtStart: boolean,
  lifecycle: ProcessLifecycle,
): Promise<void> {
  const gateway = await lifecycle.start(
    createGateway({
      config,
      masterKey,
      logger,
      migrate: migrateAtStart,
      // A cluster worker on SQLite runs the batch worker only when the primary gave it the role.
      batchWorker: options.batchWorker && process.env[BATCH_ROLE_ENV] !== 'off',
      startup: lifecycle,
    }),
  );
  const address = await gateway.app.listen({ port: options.port, host: options.host });
  if (cluster.isPrimary) {
    logger.info(
      {
        address,
        config: config.source,
        database: config.general_settings.database_url.startsWith('postgres') ? 'postgresql' : 'sqlite',
        shared_store: config.general_settings.redis_url ? 'redis' : 'memory',
      },
      `Switchboard ${VERSION} listening on ${address}`,
    );
  }
  // Start-up lines are written now rather than when the asynchronous log buffer next fills.
  logger.flush();
  lifecycle.running((signal) => {
    logger.info({ signal }, 'draining in-flight requests before exit');
    gateway
      .close()
      .then(() => {
        logger.info({ signal }, 'stopped');
        logger.flush();
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        logger.flush();
        process.exit(1);
      });
  });
}

/**
 * Set by the primary in a forked worker's environment on SQLite: `on` for the one worker that runs the
 * batch worker, `off` for the others (SQLite serializes writers; docs/batches.md, The worker).
 */
const BATCH_ROLE_ENV = 'SWITCHBOARD_CLUSTER_BATCH_WORKER';

async function servePrimary(
  config: Config,
  options: CliOptions,
  logger: Logger,
  lifecycle: ProcessLifecycle,
): Promise<void> {
  await lifecycle.start(migrate(config, logger, lifecycle.signal));
  const workers = new Set<number>();
  let stopping = false;
  // On SQLite one forked worker at a time holds the batch role; the next fork after it exits takes it.
  const soleBatchWorker = !isPostgresUrl(config.general_settings.database_url);
  let batchHolder: number | undefined;
  const fork = () => {
    const holds = soleBatchWorker && batchHolder === undefined;
    const worker = cluster.fork(soleBatchWorker ? { [BATCH_ROLE_ENV]: holds ? 'on' : 'off' } : {});
    if (holds) batchHolder = worker.id;
    workers.add(worker.id);
    worker.on('exit', (code) => {
      workers.delete(worker.id);
      if (worker.id === batchHolder) batchHolder = undefined;
      if (stopping) {
        if (workers.size === 0) process.exit(0);
        return;
      }
      logger.error({ worker: worker.id, code }, 'worker exited; starting a replacement');
      setTimeout(fork, 1_000);
    });
  };
  for (let index = 0; index < options.workers; index++) fork();
  logger.info(
    { workers: options.workers, port: options.port },
    `Switchboard ${VERSION} starting ${options.workers} workers on ${options.host}:${options.port}`,
  );
  lifecycle.running(() => {
    stopping = true;
    // Workers still starting stop at once (their own start-up handling); running ones drain.
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  });
}

async function main(lifecycle: ProcessLifecycle): Promise<void> {
  const env = process.env;
  let options: CliOptions | 'help';
  try {
    options = parseCli(process.argv.slice(2), env);
  } catch (error) {
    process.stderr.write(`switchboard: ${(error as Error).message}\nRun 'switchboard --help' for usage.\n`);
    process.exit(2);
  }
  if (options === 'help') {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  const logger = createLogger({ level: options.logLevel });
  lifecycle.setLog(logger);
  let config: Config;
  try {
    const providers = builtinProviders();
    config = loadConfig({
      path: options.configPath,
      env,
      dataDir: options.dataDir,
      checkDeployment: (params, index) => deploymentProblems(params, index, providers),
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`switchboard: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  for (const warning of config.warnings) logger.warn(warning);
  if (options.command === 'migrate') {
    // Interrupted, the migrations are not done: the Job must not count it as a success.
    lifecycle.exitCodeWhenInterrupted(1);
    await lifecycle.start(migrate(config, logger, lifecycle.signal));
    logger.flush();
    return;
  }
  if (options.command === 'batch-worker') {
    const refusal = batchWorkerRefusal(config);
    if (refusal) {
      process.stderr.write(`switchboard: ${refusal}\n`);
      process.exit(2);
    }
    const { key } = resolveMasterKey(config, options, env);
    const { healthPort, host } = options;
    return runBatchWorker({ config, masterKey: key, logger, healthPort, host, lifecycle });
  }
  return serve(config, options, env, logger, lifecycle);
}

/** `serve`: one process, or a cluster primary that migrates and forks, or one of its workers. */
async function serve(
  config: Config,
  options: CliOptions,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  lifecycle: ProcessLifecycle,
): Promise<void> {
  if (options.workers > 1 && !config.general_settings.redis_url) {
    process.stderr.write(
      'switchboard: --workers above 1 needs general_settings.redis_url: without a shared store each worker would keep its own counters and caches.\n',
    );
    process.exit(1);
  }
  if (cluster.isPrimary && existsSync(options.dataDir) && ensurePrivateFolder(options.dataDir)) {
    logger.warn(
      { folder: options.dataDir },
      'the data folder was readable by others; made it private (0700)',
    );
  }
  if (cluster.isPrimary) {
    const { key, generated } = resolveMasterKey(config, options, env);
    if (generated) printMasterKey(key, options);
    if (options.workers > 1) return servePrimary(config, options, logger, lifecycle);
    return serveWorker(config, options, key, logger, true, lifecycle);
  }
  const { key } = resolveMasterKey(config, options, env);
  return serveWorker(config, options, key, logger, false, lifecycle);
}

// Before anything else: a SIGTERM during start-up (migrations, a database that does not answer) must
// stop the process, also as PID 1 in a container, where an unhandled SIGTERM is ignored.
const lifecycle = new ProcessLifecycle({ exit: (code) => process.exit(code) });
lifecycle.install();

main(lifecycle).catch((error: unknown) => {
  // A stop during start-up fails what was starting; the stop itself ends the process.
  if (lifecycle.isStopping) return;
  const message =
    error instanceof ConfigError || error instanceof UsageError || error instanceof DatabaseUnreachableError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`switchboard: failed to start: ${message}\n`);
  process.exit(1);
});
