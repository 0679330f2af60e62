/**
 * One measured phase against one target: the load generator runs as its own pinned process, and
 * around it we read the target's CPU time and peak RSS and the machine's steal from /proc.
 */
import { fileURLToPath } from 'node:url';
import { chatRequestBody, messagesRequestBody, responsesRequestBody } from '../load/chat-request-body.ts';
import { type ClosedLoopTool, runClosedLoop } from '../load/closed-loop.ts';
import { embeddingRequestBody } from '../load/embedding-request-body.ts';
import type { OpenLoopOptions, OpenLoopResult, VariantResult } from '../load/open-loop-client.ts';
import type { Distribution } from '../measure/percentiles.ts';
import {
  foreignPercent,
  ourTicks,
  readPeakResidentKilobytes,
  readProcessCpu,
  readSystemCpu,
  stealPercent,
} from '../measure/proc-stats.ts';
import type { BenchOptions, PhaseName, TargetName } from './bench-options.ts';
import { runToCompletion } from './child-processes.ts';
import type { Target } from './start-targets.ts';
import { waitForQuiet } from './wait-for-quiet.ts';

export interface PhasePlan {
  phase: PhaseName;
  /** Offered rate for open-loop phases. */
  rate?: number;
  /** Admission phase: the unlimited key, alternated request by request with the target's limited key. */
  reference?: Target;
  /** Overrides the measured seconds (throughput slices). */
  durationSeconds?: number;
  /** Overrides the longest wait for a quiet machine. */
  quietWaitMs?: number;
}

export interface PhaseMeasurement {
  target: TargetName;
  round: number;
  phase: PhaseName;
  rate?: number;
  /** Measured requests answered 2xx (closed loop: every answered request). */
  requests: number;
  non2xx: number;
  errors: number;
  dropped: number;
  requestsPerSecond?: number;
  /** µs, send to last byte. */
  latency?: Pick<Distribution, 'p50' | 'p90' | 'p99'>;
  /** µs, send to first body byte (streams). */
  firstByte?: Distribution;
  /** Admission phase: the unlimited key's latency, measured alternately with the limited key's. */
  referenceLatency?: Distribution;
  scheduleLagP99?: number;
  /** CPU of the target's process over the phase, divided by every request it served in it. */
  cpuMicrosecondsPerRequest?: number;
  /** Every request the target handled in the phase, warm-up included (CPU per request divides by it). */
  servedRequests?: number;
  /** Closed loop: the seconds the load generator ran. */
  seconds?: number;
  stealPercent?: number;
  /** Steal on the proxy's CPU alone, when pinned. */
  proxyCpuStealPercent?: number;
  /** CPU taken by processes that are not the benchmark's, as a share of the machine. */
  otherLoadPercent?: number;
  /** How long the phase waited for other processes to quieten down before it started. */
  quietWaitMs?: number;
  peakResidentKilobytes?: number;
  firstError?: string;
}

export interface PhaseContext {
  options: BenchOptions;
  tool: ClosedLoopTool;
  loadCpu: number | undefined;
  proxyCpu: number | undefined;
  ticksPerSecond: number;
  workDirectory: string;
  /** Longest wait for a quiet machine before each phase; 0 starts at once. */
  quietWaitMs: number;
  /** Every server the benchmark runs (upstream and proxies), to tell our CPU use from other processes'. */
  serverPids: number[];
}

const openLoopScript = fileURLToPath(new URL('../load/open-loop-client.ts', import.meta.url));

export async function runPhase(
  target: Target,
  plan: PhasePlan,
  round: number,
  context: PhaseContext,
): Promise<PhaseMeasurement> {
  const quietWaitMs = await waitForQuiet(context.serverPids, plan.quietWaitMs ?? context.quietWaitMs);
  const cpuBefore = target.pid === undefined ? undefined : readProcessCpu(target.pid);
  const oursBefore = ourTicks(context.serverPids);
  const systemBefore = readSystemCpu();
  const measured = await drive(target, plan, context);
  const systemAfter = readSystemCpu();
  const oursAfter = ourTicks(context.serverPids);
  const cpuAfter = target.pid === undefined ? undefined : readProcessCpu(target.pid);
  const steal = (name: string) => {
    const before = systemBefore?.get(name);
    const after = systemAfter?.get(name);
    return before && after ? stealPercent(before, after) : undefined;
  };
  const measurement: PhaseMeasurement = {
    target: target.name,
    round,
    phase: plan.phase,
    rate: plan.rate,
    quietWaitMs,
    ...measured.result,
    servedRequests: measured.served,
    stealPercent: steal('cpu'),
    proxyCpuStealPercent: context.proxyCpu === undefined ? undefined : steal(`cpu${context.proxyCpu}`),
  };
  const machineBefore = systemBefore?.get('cpu');
  const machineAfter = systemAfter?.get('cpu');
  if (machineBefore && machineAfter && oursBefore !== undefined && oursAfter !== undefined) {
    measurement.otherLoadPercent = foreignPercent(machineBefore, machineAfter, oursAfter - oursBefore);
  }
  if (target.pid !== undefined) {
    if (cpuBefore && cpuAfter && measured.served > 0) {
      measurement.cpuMicrosecondsPerRequest =
        ((cpuAfter.ticks - cpuBefore.ticks) * (1e6 / context.ticksPerSecond)) / measured.served;
    }
    measurement.peakResidentKilobytes = readPeakResidentKilobytes(target.pid);
  }
  return measurement;
}

type Measured = Omit<PhaseMeasurement, 'target' | 'round' | 'phase' | 'rate'>;

/** Runs the load; `served` counts every request the target handled, warm-up included. */
async function drive(
  target: Target,
  plan: PhasePlan,
  context: PhaseContext,
): Promise<{ result: Measured; served: number }> {
  const { options } = context;
  if (plan.phase === 'throughput') {
    const result = await runClosedLoop({
      tool: context.tool,
      url: target.url,
      headers: target.headers,
      body: chatRequestBody(false),
      connections: options.concurrency,
      durationSeconds: plan.durationSeconds ?? options.durationSeconds,
      cpu: context.loadCpu,
      workDirectory: context.workDirectory,
    });
    return {
      result: {
        requests: result.requests - result.non2xx,
        non2xx: result.non2xx,
        errors: result.errors,
        dropped: 0,
        requestsPerSecond: result.requestsPerSecond,
        seconds: result.seconds,
        latency: result.latency,
      },
      served: result.requests,
    };
  }
  const stream = plan.phase === 'stream';
  const paired = plan.phase === 'admission' ? plan.reference : undefined;
  const request = requestOf(target, plan.phase, stream);
  const headers = plan.phase === 'cached' && target.cachedHeaders ? target.cachedHeaders : target.headers;
  const variants = [{ ...target, url: request.url, headers }, ...(paired ? [paired] : [])].map(
    ({ name, url, headers }) => ({ name, url, headers }),
  );
  const result = await runOpenLoopProcess(
    {
      variants,
      body: request.body,
      ratePerSecond: plan.rate!,
      // Each of two alternating keys gets as many samples as a single-target phase.
      durationMs: options.durationSeconds * 1000 * variants.length,
      warmupMs: options.warmupSeconds * 1000,
      stream,
      connections: 64,
      maxInFlight: 2_000,
      requestTimeoutMs: 10_000,
    },
    context.loadCpu,
  );
  const [main, reference] = result.variants as [VariantResult, VariantResult | undefined];
  return {
    result: {
      requests: main.ok,
      non2xx: main.non2xx + (reference?.non2xx ?? 0),
      errors: main.errors + (reference?.errors ?? 0),
      dropped: result.dropped,
      latency: main.latency,
      firstByte: stream ? main.firstByte : undefined,
      referenceLatency: reference?.latency,
      scheduleLagP99: result.scheduleLag?.p99,
      firstError: main.firstError ?? reference?.firstError,
    },
    // Both keys hit the same process: its CPU per request would mix them.
    served: paired ? 0 : result.total,
  };
}

/**
 * What a phase sends: chat to every target, except the translated phases, where Switchboard gets the
 * same conversation on /v1/responses or /v1/messages and the upstream alone (the floor) gets chat, and
 * the embeddings phase, where every target gets the same embeddings request on /v1/embeddings.
 */
function requestOf(target: Target, phase: PhaseName, stream: boolean): { url: string; body: string } {
  if (phase === 'embeddings')
    return {
      url: target.url.replace(/\/v1\/chat\/completions$/, '/v1/embeddings'),
      body: embeddingRequestBody(),
    };
  const translated = target.name.startsWith('switchboard') && (phase === 'responses' || phase === 'messages');
  if (!translated) return { url: target.url, body: chatRequestBody(stream) };
  const url = target.url.replace(/\/v1\/chat\/completions$/, `/v1/${phase}`);
  return { url, body: phase === 'responses' ? responsesRequestBody() : messagesRequestBody() };
}

/** Runs the open-loop client as a pinned child process (the parent stays idle while it measures). */
export async function runOpenLoopProcess(
  options: OpenLoopOptions,
  cpu: number | undefined,
): Promise<OpenLoopResult> {
  const timeoutMs = options.warmupMs + options.durationMs + options.requestTimeoutMs + 15_000;
  const { code, stdout, stderr } = await runToCompletion(
    process.execPath,
    [openLoopScript, JSON.stringify(options)],
    {
      cpu,
      timeoutMs,
    },
  );
  if (code !== 0) throw new Error(`the open-loop client exited with ${code}: ${stderr}`);
  return JSON.parse(stdout) as OpenLoopResult;
}
