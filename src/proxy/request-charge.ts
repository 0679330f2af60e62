/**
 * What one caller request is charged: its admission, then the real usage and cost of every provider
 * call made for it (one, or each model turn of an MCP tool loop), settled once when the request is
 * over. Settling corrects the token counters, adds the cost to budgets, adds deployment usage, frees
 * the in-flight slot, and writes the request's spend record (legacy or outbox mode). Each provider
 * attempt's output also goes to the ticket's OutputRecorder when output-token limits govern the request.
 */

import { randomUUID } from 'node:crypto';
import type { ChargesInFlight } from '../accounting/charges-in-flight.ts';
import {
  type CheckedUsage,
  checkUsage,
  DEFAULT_USAGE_BOUND,
  type UsageProblem,
} from '../accounting/plausible-usage.ts';
import type { SpendWriter } from '../accounting/spend-writer.ts';
import type { Caller } from '../canonical/caller.ts';
import type { BilledUnits } from '../canonical/modalities.ts';
import type { SpendRecord } from '../canonical/spend-record.ts';
import type { Usage } from '../canonical/usage.ts';
import type { AdmissionTicket } from '../limits/caller-admission.ts';
import type { DeploymentCapacity, DeploymentUsageSnapshot } from '../limits/deployment-capacity.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { CounterAdjustment } from '../store/shared/rate-limit-counters.ts';

/** How a request is priced and where its record goes (absent: nothing is recorded). */
export interface SpendAccounting {
  /**
   * USD of one provider call's usage (tokens, and the non-token units of images, audio, rerank) on a
   * deployment; null when the usage or a needed price is unknown.
   */
  costOf(
    deploymentId: string,
    usage: Usage | undefined,
    upstreamModel: string,
    units?: BilledUnits,
  ): number | null;
  /** The most tokens one call of the deployment can count (plausible-usage.ts). */
  usageBound(deploymentId: string): number;
  writer: SpendWriter;
  metrics: Metrics;
  logger: Logger;
  now(): number;
  /** Charges not settled yet, which a shutdown's spend flush waits for (bounded). */
  inFlight?: ChargesInFlight;
}

/** Why a call was charged an estimate instead of its provider's report. */
export type EstimateReason = 'caller_left' | 'unreadable_usage';

/** The request's own facts, known at admission. */
export interface ChargedRequest {
  requestId: string;
  caller: Caller;
  model: string;
  endpoint: string;
  stream: boolean;
  /** performance.now() when the request started. */
  startedAt: number;
}

export class RequestCharge {
  readonly ticket: AdmissionTicket;
  /** Deployment usage read at admission, for routing every call of this request. */
  readonly capacity: DeploymentUsageSnapshot;
  private readonly deploymentCapacity: DeploymentCapacity;
  private readonly request: ChargedRequest | undefined;
  private readonly accounting: SpendAccounting | undefined;
  private readonly adjustments: CounterAdjustment[] = [];
  private readonly tokens = { prompt: 0, completion: 0, reasoning: 0, cached: 0, cacheCreation: 0, total: 0 };
  /** Sum of the priced calls; `unpriced` says whether a call's cost is unknown. */
  private cost = 0;
  private unpriced = false;
  private calls = 0;
  private usageUnknown = false;
  private usageEstimated = false;
  /** Failed attempts that may have produced output (routing's report), for a tool-loop turn's estimate. */
  private openAttemptsFailed = 0;
  private deploymentId: string | null = null;
  private modelGroup: string | null = null;
  private attempts = 0;
  private ttftMs: number | null = null;
  private cacheHit = false;
  private cacheStatus: 'hit' | 'miss' | 'bypass' | undefined;
  private answerHeaders: Readonly<Record<string, string>> | undefined;
  private settled: Promise<void> | undefined;
  private readonly release: (() => void) | undefined;

  constructor(
    ticket: AdmissionTicket,
    deploymentCapacity: DeploymentCapacity,
    deploymentIds: readonly string[],
    spend?: { request: ChargedRequest; accounting: SpendAccounting },
  ) {
    this.ticket = ticket;
    this.deploymentCapacity = deploymentCapacity;
    this.capacity = deploymentCapacity.snapshot(deploymentIds, ticket.reads);
    this.request = spend?.request;
    this.accounting = spend?.accounting;
    this.release = spend?.accounting.inFlight?.begin();
  }

  /**
   * A provider call for this request answered, with this token usage (undefined when the provider gave
   * none) and the non-token units it is billed by (an image call without token usage is still known).
   * Implausible usage is clamped, and unreadable usage charged `estimate()` when one is given (both
   * reported: log and metric). Returns the usage charged.
   */
  answered(
    deploymentId: string,
    usage: Usage | undefined,
    upstreamModel: string,
    units?: BilledUnits,
    estimate?: () => Usage,
  ): Usage | undefined {
    const checked = usage && this.plausible(deploymentId, usage);
    if (usage && !checked?.usage && estimate) {
      this.estimated(deploymentId, estimate(), upstreamModel, 'unreadable_usage');
      return undefined;
    }
    const charged = checked?.usage;
    this.charge(deploymentId, charged, upstreamModel, units);
    if (!charged && !units) this.usageUnknown = true;
    // Cache hits and non-text units (images, audio, rerank) are not output-token accounting (rule 2, 5);
    // an implausible report's output is unknown, as output-token limits never count a guess.
    if (!this.cacheHit && !units)
      this.ticket.output?.attempt(checked?.problem === undefined ? outputOf(charged) : 'unknown');
    return charged;
  }

  /**
   * A provider call whose report never came (or could not be read) is charged the gateway's estimate:
   * to budgets, spend and the token counters, with the record marked estimated. Its output stays unknown
   * for output-token limits, which never count estimates.
   */
  estimated(deploymentId: string, usage: Usage, upstreamModel: string, reason: EstimateReason): void {
    this.usageEstimated = true;
    this.charge(deploymentId, usage, upstreamModel, undefined);
    this.ticket.output?.attempt('unknown');
    this.accounting?.metrics.estimatedCharges.inc({ reason });
  }

  private charge(
    deploymentId: string,
    usage: Usage | undefined,
    upstreamModel: string,
    units: BilledUnits | undefined,
  ): void {
    this.calls++;
    if (usage) {
      const tokens = this.tokens;
      tokens.prompt += usage.prompt_tokens;
      tokens.completion += usage.completion_tokens;
      tokens.total += usage.total_tokens;
      // Details never pass the counts they are part of (a clamped report's details are not clamped).
      tokens.reasoning += Math.min(
        count(usage.completion_tokens_details?.reasoning_tokens),
        usage.completion_tokens,
      );
      tokens.cached += Math.min(count(usage.prompt_tokens_details?.cached_tokens), usage.prompt_tokens);
      tokens.cacheCreation += Math.min(
        count(usage.prompt_tokens_details?.cache_creation_tokens),
        usage.prompt_tokens,
      );
    }
    const cost = this.accounting ? this.accounting.costOf(deploymentId, usage, upstreamModel, units) : null;
    if (cost === null) this.unpriced = true;
    else this.cost += cost;
    this.adjustments.push(...this.deploymentCapacity.settlement(deploymentId, usage?.total_tokens));
  }

  /** The report as it may be charged (no usage when unreadable); anything implausible is logged and counted. */
  private plausible(deploymentId: string, usage: Usage): CheckedUsage {
    const accounting = this.accounting;
    const checked = checkUsage(usage, accounting?.usageBound(deploymentId) ?? DEFAULT_USAGE_BOUND);
    if (checked.problem !== undefined) this.reportImplausible(deploymentId, checked.problem, checked.usage);
    return checked;
  }

  private reportImplausible(deploymentId: string, problem: UsageProblem, charged: Usage | undefined): void {
    if (!this.accounting) return;
    this.accounting.metrics.implausibleUsage.inc({ reason: problem });
    // The counts charged, never the upstream's raw values (a string there could hold anything).
    this.accounting.logger.warn(
      {
        deploymentId,
        reason: problem,
        requestId: this.request?.requestId,
        chargedPromptTokens: charged?.prompt_tokens ?? null,
        chargedCompletionTokens: charged?.completion_tokens ?? null,
      },
      'implausible usage from the upstream: not charged as reported',
    );
  }

  /** The routing facts of the call that answered (the last one, for an MCP tool loop). */
  routed(deploymentId: string | null, modelGroup: string | null, attempts: number): void {
    this.deploymentId = deploymentId ?? this.deploymentId;
    this.modelGroup = modelGroup ?? this.modelGroup;
    this.attempts += attempts;
  }

  /**
   * A provider attempt failed without an answer; `outputUnknown` when it may have produced output (it
   * was sent and then timed out, broke or was cancelled), so its usage is unknown (rule 6).
   */
  attemptFailed(outputUnknown: boolean): void {
    if (!outputUnknown) return;
    this.openAttemptsFailed++;
    this.ticket.output?.attempt('unknown');
  }

  /** How many failed attempts so far may have produced output (see attemptFailed). */
  get attemptsWithUnknownOutput(): number {
    return this.openAttemptsFailed;
  }

  /** Waits for the output-token writes started so far, so headers show the final accounting. */
  outputAccounted(): Promise<void> {
    return this.ticket.output?.flush() ?? Promise.resolve();
  }

  /**
   * The rate-limit headers of the admission (output headers as last recorded) and the response
   * cache's verdict, for every answer.
   */
  get headers(): Readonly<Record<string, string>> {
    const output = this.ticket.output;
    if (output) return { ...this.ticket.headers, ...output.headers, ...this.cacheHeader() };
    this.answerHeaders ??= this.cacheStatus
      ? { ...this.ticket.headers, 'x-switchboard-cache': this.cacheStatus }
      : this.ticket.headers;
    return this.answerHeaders;
  }

  private cacheHeader(): Record<string, string> {
    return this.cacheStatus ? { 'x-switchboard-cache': this.cacheStatus } : {};
  }

  /** Records the response cache's verdict for this request's answer headers. */
  cached(status: 'hit' | 'miss' | 'bypass'): void {
    this.cacheStatus = status;
    this.answerHeaders = undefined;
  }

  /** The answer came from the response cache: no provider call, no cost, the cached answer's tokens recorded. */
  servedFromCache(usage: Usage | undefined): void {
    this.cacheHit = true;
    if (usage) this.charge('', checkUsage(usage, DEFAULT_USAGE_BOUND).usage, '', undefined);
    this.cost = 0;
    this.unpriced = false;
    this.adjustments.length = 0;
  }

  /**
   * Content reached the caller but the answer never completed (the upstream broke): its usage is unknown.
   * `attemptOpen`: a provider attempt was still running (a stream cut or left), so its output is
   * unknown too; false when routing already reported every attempt (attemptFailed).
   */
  incomplete(attemptOpen = true): void {
    this.usageUnknown = true;
    if (attemptOpen) this.ticket.output?.attempt('unknown');
  }

  /** A stream's first chunk arrived. */
  firstToken(): void {
    if (this.request && this.ttftMs === null) this.ttftMs = performance.now() - this.request.startedAt;
  }

  /**
   * Ends the request's charge with its HTTP status (later calls return the same promise); `waited`
   * when the answer waits for it (a stream's terminal marker, an outbox-mode answer). Resolves when
   * the store has taken the counters and the writer the record; rejects only when an outbox-mode
   * writer could not accept the charge, which the caller turns into a failed answer.
   */
  settle(status: number, waited = false): Promise<void> {
    this.settled ??= this.finish(status, waited);
    this.release?.(); // finish() handed the record to the writer before its first await
    return this.settled;
  }

  private async finish(status: number, waited: boolean): Promise<void> {
    // A request no provider answered consumed nothing; the rate-limit counters still keep their
    // estimate for it (no correction without a usage report), as they always have.
    const known = !this.usageUnknown;
    // The record's cost is null when any part is unknown; budgets are still charged what is known.
    const cost = known && !this.unpriced ? this.cost : null;
    // A cache hit used no provider tokens: the counters are corrected to nothing used.
    const usedTokens = this.cacheHit ? 0 : this.tokens.total;
    const counters = this.ticket.settle({
      totalTokens: known && (this.calls > 0 || this.cacheHit) ? usedTokens : undefined,
      adjustments: this.adjustments,
      cost: this.cost,
    });
    if (!this.request || !this.accounting) {
      await Promise.all([counters, this.outputAccounted()]);
      return;
    }
    const record = this.record(status, known, cost);
    // Labelled by the model group (bounded), not by the free-form name a wildcard group answered.
    if (cost !== null && cost > 0)
      this.accounting.metrics.spend.inc({ model: record.modelGroup ?? record.model }, cost);
    await Promise.all([counters, this.accounting.writer.write(record, waited), this.outputAccounted()]);
  }

  private record(status: number, known: boolean, cost: number | null): SpendRecord {
    const request = this.request!;
    const { caller } = request;
    const tokens = this.tokens;
    const counted = (value: number) => (known ? value : null);
    return {
      spendId: randomUUID(),
      requestId: request.requestId,
      createdAt: this.accounting!.now(),
      keyId: caller.keyId,
      userId: caller.userId,
      teamId: caller.teamId,
      organizationId: caller.organizationId,
      model: request.model,
      modelGroup: this.modelGroup,
      deploymentId: this.deploymentId,
      endpoint: request.endpoint,
      attempts: this.attempts,
      stream: request.stream,
      status,
      usageKnown: known && !this.usageEstimated,
      usageEstimated: this.usageEstimated,
      promptTokens: counted(tokens.prompt),
      completionTokens: counted(tokens.completion),
      reasoningTokens: counted(tokens.reasoning),
      cachedTokens: counted(tokens.cached),
      cacheCreationTokens: counted(tokens.cacheCreation),
      totalTokens: counted(tokens.total),
      cost,
      latencyMs: performance.now() - request.startedAt,
      ttftMs: this.ttftMs,
      cacheHit: this.cacheHit,
    };
  }
}

/** An attempt's output tokens (reasoning and tool calls included), or unknown without a valid count. */
function outputOf(usage: Usage | undefined): number | 'unknown' {
  const tokens = usage?.completion_tokens;
  return typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0 ? tokens : 'unknown';
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
