/**
 * The router's per-attempt output evidence (spec output rule 6 and the usage-marker states): each
 * failed attempt says whether it may have produced output. Nothing sent (a pool timeout, a refused
 * connection) or an error status is known zero; a timeout, a broken connection or a cancel after the
 * request left is unknown, and so is a failure of our own code after it; before it (building or signing
 * the request) nothing was sent, which is known zero (rule 5).
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { seededRandom } from '../../test/support/seeded-random.ts';
import { freePort } from '../../test/support/tcp-ports.ts';
import { testDeployment, testGroup } from '../../test/support/test-deployments.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { RouterSettings } from '../config/config.ts';
import { DeploymentCapacity } from '../limits/deployment-capacity.ts';
import { createMetrics } from '../observability/metrics.ts';
import type {
  AttemptContext,
  ChatCapability,
  CompletionResult,
  DeploymentSettings,
  ProviderAdapter,
} from '../providers/provider-adapter.ts';
import { PoolTimeoutError } from '../providers/send-upstream.ts';
import { classifyStatus, LocalFailure, UpstreamError } from '../providers/upstream-error.ts';
import { sendRequest } from '../providers/upstream-exchange.ts';
import { UpstreamPool } from '../providers/upstream-pool.ts';
import { DeploymentHealth } from './deployment-health.ts';
import { FallbackEventLog } from './fallback-events.ts';
import { ModelRegistry } from './model-registry.ts';
import { Router } from './router.ts';
import { simpleShuffle } from './strategies/simple-shuffle.ts';

const settings: RouterSettings = {
  routing_strategy: 'simple-shuffle',
  routing_strategy_args: { lowest_latency_buffer: 0, ttl: 3600 },
  num_retries: 0,
  retry_after: 0,
  allowed_fails: 3,
  cooldown_time: 5,
  timeout: 600,
  stream_timeout: 600,
  connect_timeout: 10,
  pool_timeout: 10,
  max_connections_per_deployment: 10,
  fallbacks: {},
  context_window_fallbacks: {},
  enable_pre_call_checks: false,
};

/** An adapter whose every call fails with `error`, after sending its request unless `sent` is false. */
function failing(error: unknown, sent = true): ProviderAdapter & ChatCapability {
  const adapter = {
    async complete(_request: ChatRequest, context: AttemptContext): Promise<CompletionResult> {
      if (sent) context.dispatched?.();
      throw error;
    },
    // biome-ignore lint/correctness/useYield: it fails before its first chunk
    async *stream(_request: ChatRequest, context: AttemptContext) {
      if (sent) context.dispatched?.();
      throw error;
    },
    async close() {},
  };
  return { ...adapter, chat: adapter } as unknown as ProviderAdapter & ChatCapability;
}

async function evidenceOf(error: unknown, sent = true): Promise<boolean[]> {
  const clock = new ManualClock();
  const router = new Router({
    registry: new ModelRegistry([], 0),
    settings,
    strategy: simpleShuffle,
    health: new DeploymentHealth({ allowedFails: 3, cooldownMs: 5_000, latencyTtlMs: 3_600_000 }, clock),
    events: new FallbackEventLog(),
    metrics: createMetrics({ collectProcessMetrics: false }),
    clock,
    random: seededRandom(1),
  });
  const reports: boolean[] = [];
  const group = testGroup('group', [testDeployment('d1', { adapter: failing(error, sent) })]);
  await router
    .complete(
      group,
      { model: 'group', messages: [{ role: 'user', content: 'hi' }] },
      {
        signal: new AbortController().signal,
        requestId: 'r1',
        promptTokenEstimate: 1,
        capacity: new DeploymentCapacity(false).snapshot([], []),
        deadline: Date.now() + 60_000,
        attemptFailed: (outputUnknown) => reports.push(outputUnknown),
      },
    )
    .catch(() => {});
  return reports;
}

describe('per-attempt output evidence from the router', () => {
  it.each([
    ['a connection-pool timeout (nothing was sent)', new PoolTimeoutError(100), false],
    ['a refused connection', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }), false],
    ['an error status', classifyStatus(500, {}), false],
    [
      'a headers timeout after sending',
      Object.assign(new Error('t'), { code: 'UND_ERR_HEADERS_TIMEOUT' }),
      true,
    ],
    ['a dropped connection', Object.assign(new Error('reset'), { code: 'ECONNRESET' }), true],
    ['a cancel', new UpstreamError({ kind: 'aborted', retryable: false, message: 'aborted' }), true],
    ['an unparseable answer', new UpstreamError({ kind: 'protocol', retryable: true, message: 'bad' }), true],
    ['a failure of our own code after the request left', new RangeError('bug'), true],
  ])('%s → output unknown: %s', async (_what, error, unknown) => {
    expect(await evidenceOf(error)).toEqual([unknown]);
  });

  it.each([
    ['a failure of our own code (building or signing the request)', new LocalFailure(new Error('sign'))],
    ['an unexpected error of our own code', new RangeError('bug')],
  ])('%s before the request was sent is known zero (rule 5)', async (_what, error) => {
    expect(await evidenceOf(error, false)).toEqual([false]);
  });

  it('sendRequest reports the dispatch before the request leaves', async () => {
    const port = await freePort();
    const settings: DeploymentSettings = {
      model: 'm',
      params: {},
      timeouts: { connectMs: 1_000, headersMs: 1_000, streamIdleMs: 1_000, totalMs: 1_000, poolMs: 1_000 },
      maxConnections: 1,
    };
    const pool = new UpstreamPool(`http://127.0.0.1:${port}`, settings);
    let dispatched = 0;
    const context: AttemptContext = {
      signal: new AbortController().signal,
      requestId: 'r1',
      dispatched: () => dispatched++,
    };
    try {
      await expect(
        sendRequest(
          pool,
          settings,
          { path: '/v1/chat/completions', headers: {}, body: '{}' },
          context,
          false,
        ),
      ).rejects.toMatchObject({ kind: 'connect' });
      expect(dispatched).toBe(1);
    } finally {
      await pool.close();
    }
  });
});
