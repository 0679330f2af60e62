/**
 * Every metric the gateway exports, with its name and labels, in one place. Each process owns one
 * registry; `createMetrics` is called once by the composition root (and once per test app).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { TallyCounter } from './tally-counter.ts';

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createMetrics(options: { collectProcessMetrics: boolean }) {
  const registry = new Registry();
  if (options.collectProcessMetrics) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    /** inc(method, route, status) */
    httpRequests: new TallyCounter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests answered, by route and status.',
      labelNames: ['method', 'route', 'status'] as const,
      registers,
    }),
    httpRequestDuration: new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'Time to answer an HTTP request (to the last byte), by route.',
      labelNames: ['method', 'route'] as const,
      buckets: latencyBuckets,
      registers,
    }),
    /** inc(model, status) */
    requests: new TallyCounter({
      name: 'gateway_requests_total',
      help: 'Proxied model requests, by public model and status.',
      labelNames: ['model', 'status'] as const,
      registers,
    }),
    requestDuration: new Histogram({
      name: 'gateway_request_duration_seconds',
      help: 'Time to answer a proxied model request, by public model.',
      labelNames: ['model'] as const,
      buckets: latencyBuckets,
      registers,
    }),
    timeToFirstToken: new Histogram({
      name: 'gateway_time_to_first_token_seconds',
      help: 'Time from request to the first streamed chunk, by public model.',
      labelNames: ['model'] as const,
      buckets: latencyBuckets,
      registers,
    }),
    upstreamAttempts: new Counter({
      name: 'gateway_upstream_attempts_total',
      help: 'Attempts sent to upstream deployments, by deployment id and outcome.',
      labelNames: ['deployment', 'outcome'] as const,
      registers,
    }),
    deploymentCooldowns: new Counter({
      name: 'gateway_deployment_cooldowns_total',
      help: 'Times a deployment was put in cooldown, by deployment id.',
      labelNames: ['deployment'] as const,
      registers,
    }),
    tokens: new Counter({
      name: 'gateway_tokens_total',
      help: 'Tokens counted from upstream usage, by public model and direction (input, output).',
      labelNames: ['model', 'direction'] as const,
      registers,
    }),
    /** inc(scope, dimension, outcome): tallied, because an admission checks up to twenty counters. */
    rateLimitDecisions: new TallyCounter({
      name: 'gateway_ratelimit_decisions_total',
      help: 'Identity rate-limit checks, by scope, dimension and outcome (allowed, rejected).',
      labelNames: ['scope', 'dimension', 'outcome'] as const,
      registers,
    }),
    rateLimitStoreErrors: new Counter({
      name: 'gateway_ratelimit_store_errors_total',
      help: 'Rate-limit operations that failed because the shared store did not answer.',
      registers,
    }),
    budgetRejections: new Counter({
      name: 'gateway_budget_rejections_total',
      help: 'Requests refused because a spend budget was reached, by scope (organization, team, user, key).',
      labelNames: ['scope'] as const,
      registers,
    }),
    rateLimitDegraded: new Gauge({
      name: 'gateway_ratelimit_degraded',
      help: '1 while rate limits run on per-process counters because the shared store is down.',
      registers,
    }),
    rateLimitLocalDecisions: new Counter({
      name: 'gateway_ratelimit_local_decisions_total',
      help: 'Admissions decided on per-process counters (fail_open) because the shared store was down or did not answer.',
      registers,
    }),
    outputTpmEvents: new Counter({
      name: 'gateway_output_tpm_events_total',
      help: 'Output-token governor events (admitted, denied, unknown_usage, unavailable, accounted, unknown, accounting_failed, saturated).',
      labelNames: ['event'] as const,
      registers,
    }),
    spend: new Counter({
      name: 'gateway_spend_total',
      help: 'Spend in USD of answered requests whose price and usage are known, by public model.',
      labelNames: ['model'] as const,
      registers,
    }),
    // Billing edges (issue 25): usage reports not charged as they came, and charges the gateway estimated.
    implausibleUsage: new Counter({
      name: 'gateway_implausible_usage_total',
      help: 'Provider usage reports not charged as reported, by reason (above_bound, negative, not_integer, unreadable).',
      labelNames: ['reason'] as const,
      registers,
    }),
    estimatedCharges: new Counter({
      name: 'gateway_estimated_charges_total',
      help: 'Provider calls charged an estimate instead of their usage report, by reason (caller_left, unreadable_usage).',
      labelNames: ['reason'] as const,
      registers,
    }),
    accountingWrites: new Counter({
      name: 'gateway_accounting_writes_total',
      help: 'Spend records by ingestion mode and outcome (legacy: written, retained, written_after_retry, spilled, dropped; outbox: accepted, failed, timeout, settled, abandoned; both: replayed).',
      labelNames: ['mode', 'outcome'] as const,
      registers,
    }),
    outboxPending: new Gauge({
      name: 'gateway_outbox_pending',
      help: 'Outbox mode: accepted charges not yet moved into spend records.',
      registers,
    }),
    outboxSettlementLag: new Gauge({
      name: 'gateway_outbox_settlement_lag_seconds',
      help: 'Outbox mode: age of the oldest accepted charge not yet settled (0 when none waits).',
      registers,
    }),
    cacheRequests: new Counter({
      name: 'gateway_response_cache_requests_total',
      help: 'Response cache lookups and decisions by outcome (hit, miss, bypass, too_large, read_error, write_error).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    cacheBytes: new Counter({
      name: 'gateway_response_cache_bytes_total',
      help: 'Bytes of cached answers read (hits) and written.',
      labelNames: ['direction'] as const,
      registers,
    }),
    mcpToolCalls: new Counter({
      name: 'gateway_mcp_tool_calls_total',
      help: 'MCP tool calls, by server key, tool and outcome.',
      labelNames: ['server', 'tool', 'outcome'] as const,
      registers,
    }),
    mcpToolCallDuration: new Histogram({
      name: 'gateway_mcp_tool_call_duration_seconds',
      help: 'Duration of MCP tool calls sent upstream, by server key.',
      labelNames: ['server'] as const,
      buckets: latencyBuckets,
      registers,
    }),
    mcpApprovals: new Counter({
      name: 'gateway_mcp_approvals_total',
      help: 'MCP approval requests by resulting status (pending, approved, rejected, expired, consumed).',
      labelNames: ['status'] as const,
      registers,
    }),
    batchItems: new Counter({
      name: 'gateway_batch_items_total',
      help: "Batch items handled by this process's batch worker, by outcome (succeeded, failed, retried, delayed, discarded: a late result of a lease taken over; cancelled, expired: closed unrun).",
      labelNames: ['outcome'] as const,
      registers,
    }),
    batchLeaseReclaims: new Counter({
      name: 'gateway_batch_lease_reclaims_total',
      help: 'Batch items this process took over from an expired lease (a dead or stalled worker).',
      registers,
    }),
    batchQueueReady: new Gauge({
      name: 'gateway_batch_queue_ready_items',
      help: "Batch items ready to run (pending and due, or with an expired lease) at the start of this worker's last round.",
      registers,
    }),
    batchDuration: new Histogram({
      name: 'gateway_batch_duration_seconds',
      help: "Time from a batch's creation to its terminal status, by that status; observed by the worker that finalized it.",
      labelNames: ['status'] as const,
      buckets: [1, 10, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800, 43_200, 86_400, 172_800],
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
