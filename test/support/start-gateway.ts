/**
 * Starts a complete gateway in this process (the same composition as the CLI) on a free loopback port,
 * from YAML, on a given backend. Returns its base URL and master key and closes everything afterwards.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { parseConfig } from '../../src/config/load-config.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { SettingsRepository } from '../../src/store/db/repositories/settings-repository.ts';
import { OUTPUT_EPOCH_KEY } from '../../src/store/shared/output-counters.ts';
import type { Backend } from './backends.ts';
import { SecretScanner } from './secret-scanner.ts';

export interface TestGateway {
  baseUrl: string;
  masterKey: string;
  gateway: Gateway;
  /** Sees every answer, log line (unless a logger was passed) and the final /metrics for secrets. */
  scanner: SecretScanner;
  /** Closes the gateway, then fails if a secret was seen (the secret scanner, issue 18). */
  close(): Promise<void>;
  /** Creates an API key through the admin API and returns its secret. */
  createKey(body?: Record<string, unknown>): Promise<string>;
  /** Calls the admin API with the master key. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

export interface StartOptions {
  backend: Backend;
  /** YAML without general_settings' backend lines (they come from the backend). */
  yaml?: string;
  /** Extra general_settings lines (indented two spaces). */
  generalSettings?: string;
  clock?: Clock;
  masterKey?: string;
  /** The gateway's logger (default: pino at TEST_LOG_LEVEL, silent). */
  logger?: pino.Logger;
  /** Environment variables over process.env, as the configuration loader sees them. */
  env?: Record<string, string>;
  /**
   * Start on a Redis store that has never run a gateway: its output epoch marker is absent, so the
   * start creates it paused and governed callers wait for the next minute. By default the store is
   * one that has run before (a live marker is put there when none is).
   */
  freshStore?: boolean;
  /**
   * Turns files and batches on, as general_settings.embeddings_batch_enabled: true in the test's
   * configuration would (a shorthand for the many batch tests).
   */
  batches?: boolean;
  /** Where the built console is (default ui/dist): an empty folder plays a checkout without it. */
  consoleDistDir?: string;
  /** Called before the gateway listens (a test-only route, a hook). */
  beforeListen?: (gateway: Gateway) => void;
}

const defaultModels = `
model_list:
  - model_name: demo
    params: { provider: fake, model: demo }
    model_info: { id: demo-fake }
`;

export async function startTestGateway(options: StartOptions): Promise<TestGateway> {
  const masterKey = options.masterKey ?? 'sk-test-master-key';
  const yaml = `${options.yaml ?? defaultModels}\ngeneral_settings:\n${options.backend.generalSettingsYaml}${options.generalSettings ?? ''}`;
  // The gateway's own data folder (the spend spill goes there), removed when it closes.
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-data-'));
  const parsed = parseConfig(yaml, {
    path: undefined,
    env: { ...process.env, ...options.env },
    dataDir,
    source: 'test',
  });
  const config = options.batches
    ? { ...parsed, general_settings: { ...parsed.general_settings, embeddings_batch_enabled: true } }
    : parsed;
  if (options.backend.redisUrl && !options.freshStore)
    await ensureLiveEpoch(options.backend.redisUrl, options.backend.prefix);
  const scanner = new SecretScanner();
  scanner.add(masterKey, 'master key');
  scanner.addFrom(config, 'configuration');
  const gateway = await createGateway({
    config,
    masterKey,
    logger: options.logger ?? scannedLogger(scanner),
    storePrefix: options.backend.prefix,
    ...(options.backend.schema ? { databaseSchema: options.backend.schema } : {}),
    ...(options.clock ? { clock: options.clock, storeClock: options.clock } : {}),
    collectProcessMetrics: false,
    ...(options.consoleDistDir ? { consoleDistDir: options.consoleDistDir } : {}),
  });
  scanner.add(await new SettingsRepository(gateway.database.db).get('key_salt'), 'hashing salt');
  scanner.watch(gateway.app);
  options.beforeListen?.(gateway);
  const baseUrl = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${masterKey}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  return {
    baseUrl,
    masterKey,
    gateway,
    scanner,
    admin,
    async createKey(body = {}) {
      const response = await admin('POST', '/ui/api/keys', body);
      if (response.status !== 201) throw new Error(`key creation failed: ${JSON.stringify(response.body)}`);
      return response.body.key as string;
    },
    async close() {
      const metrics = await gateway.app.inject({ method: 'GET', url: '/metrics' }).catch(() => undefined);
      if (metrics) scanner.scan(metrics.body, 'the /metrics text');
      await gateway.close(1_000);
      rmSync(dataDir, { recursive: true, force: true });
      scanner.assertClean();
    },
  };
}

/**
 * The production logger (with its redaction) at debug, every line scanned and dropped; lines at
 * TEST_LOG_LEVEL and above also go to stdout.
 */
function scannedLogger(scanner: SecretScanner): pino.Logger {
  const level = process.env.TEST_LOG_LEVEL;
  const scanned = { level: 'debug' as const, stream: scanner.logDestination() };
  const destination =
    level && level !== 'silent'
      ? pino.multistream([scanned, { level: level as pino.Level, stream: process.stdout }])
      : pino.multistream([scanned]);
  return createLogger({ level: 'debug', destination });
}

/** A live output epoch marker under `prefix`, unless one (live or paused) is there or Redis is down. */
async function ensureLiveEpoch(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  redis.on('error', () => {});
  try {
    await redis.eval(
      "if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('HSET', KEYS[1], 'id', ARGV[1], 'until', 0, 'seq', 0) end",
      1,
      prefix + OUTPUT_EPOCH_KEY,
      randomUUID(),
    );
  } catch {
    // A test that starts against an unreachable Redis has no marker to keep.
  } finally {
    redis.disconnect();
  }
}
