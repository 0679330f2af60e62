/**
 * One soak run: baseline descriptors of an idle gateway, a steady chat + MCP load for the given time
 * with a sample of the process every few seconds, then a settle poll until descriptors are back (or a
 * deadline passes). Returns everything measured; judge.ts turns it into verdicts.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { isServed, SteadyLoad, summarize } from '../faults/support/steady-load.ts';
import { DEADLINE_MS, DESCRIPTOR_ALLOWANCE, SETTLE_DEADLINE_MS } from './bounds.ts';
import { CallerConnections } from './caller-connections.ts';
import { McpLoad, type McpRecord } from './mcp-load.ts';
import type { SoakOptions } from './options.ts';
import { type Sample, scrapeMetricsText, takeSample } from './process-sampler.ts';
import type { BackendKind, SoakSystem } from './soak-gateway.ts';

/** Share of the load sent as chat completions (half of them streamed); the rest is MCP. */
export const CHAT_SHARE = 0.7;
const PROGRESS_EVERY_MS = 15_000;

export interface RequestTally {
  requests: number;
  errors: number;
  timeouts: number;
  slowestMs: number;
  errorsByOutcome: Record<string, number>;
}

export interface SoakRun {
  backend: BackendKind;
  options: SoakOptions;
  startedAt: string;
  samples: Sample[];
  baseline: { fds: number; sockets: number };
  afterLoad: { fds: number; sockets: number; settledInMs: number | null };
  chat: RequestTally;
  mcp: RequestTally;
  /** The first failed requests (at most 200): when they started (s since the soak began), how long they took. */
  failures: Array<{ t: number; ms: number; kind: string; outcome: string }>;
  /** Requests started per second over the load phase, as achieved (the open loop's own accuracy). */
  achievedRate: number;
  /** The soak process's own event-loop delay (p99, ms): when high, client-side lateness is ours. */
  soakLagP99Ms: number;
  /** The gateway's request-duration histograms at the end of the load: its own view of latency. */
  gatewayLatency: string[];
  /** The gateway's last log lines (warnings and errors: it runs at LOG_LEVEL=warn). */
  gatewayLog: string[];
  /** Set when the gateway exited during the run. */
  gatewayExit: string | null;
}

export interface Hooks {
  log(line: string): void;
  /** Ends the load phase early (Ctrl-C), still settling and judging what was measured. */
  interrupted(): boolean;
}

export async function runSoak(
  system: SoakSystem,
  backend: BackendKind,
  options: SoakOptions,
  hooks: Hooks,
): Promise<SoakRun> {
  const origin = performance.now();
  const now = () => (performance.now() - origin) / 1000;
  const samples: Sample[] = [];
  const sample = async (phase: Sample['phase']) => {
    const taken = await takeSample(system.pid, system.gateway.baseUrl, now(), phase);
    samples.push(taken);
    return taken;
  };
  const exited = () => {
    const child = system.gateway.child;
    return child.exitCode !== null || child.signalCode !== null
      ? `exit code ${child.exitCode}, signal ${child.signalCode}`
      : null;
  };

  const baseline = await settleBaseline(sample);
  hooks.log(`[soak] baseline: ${baseline.fds} descriptors, ${baseline.sockets} sockets`);

  const soakLag = monitorEventLoopDelay({ resolution: 10 });
  soakLag.enable();
  const connections = CallerConnections.open();
  const chatRate = options.rate * CHAT_SHARE;
  const loadStart = performance.now();
  const chat = SteadyLoad.start({
    baseUrls: [system.gateway.baseUrl],
    apiKey: system.apiKey,
    model: system.model,
    ratePerSecond: chatRate,
    streamShare: 0.5,
    timeoutMs: DEADLINE_MS,
    body: { max_tokens: 32, stream_options: { include_usage: true } },
  });
  const mcp = await McpLoad.start({
    baseUrl: system.gateway.baseUrl,
    apiKey: system.apiKey,
    serverKey: system.mcpServerKey,
    ratePerSecond: options.rate - chatRate,
    timeoutMs: DEADLINE_MS,
  });

  const loadEnd = loadStart + options.minutes * 60_000;
  let nextProgress = loadStart + PROGRESS_EVERY_MS;
  let previous = samples.at(-1)!;
  let previousCount = 0;
  let gatewayExit: string | null = null;
  while (performance.now() < loadEnd && !hooks.interrupted()) {
    await delay(Math.min(options.sampleSeconds * 1000, loadEnd - performance.now()));
    gatewayExit = exited();
    if (gatewayExit) break;
    const current = await sample('load');
    if (performance.now() >= nextProgress) {
      const count = chat.records.length + mcp.records.length;
      hooks.log(progressLine(current, previous, count - previousCount, errorsSoFar(chat, mcp)));
      previous = current;
      previousCount = count;
      nextProgress += PROGRESS_EVERY_MS;
      system.trimRecordings();
    }
  }
  const loadSeconds = (performance.now() - loadStart) / 1000;
  const gatewayLatency = gatewayExit ? [] : await latencyLines(system.gateway.baseUrl);
  const chatSummary = await chat.stop();
  await mcp.stop();
  // Callers leave: their sockets close, and the gateway's side of each must close too.
  await connections.close();
  soakLag.disable();

  let afterLoad = { ...baseline, settledInMs: null as number | null };
  if (!gatewayExit) {
    afterLoad = await settleAfterLoad(sample, baseline);
    hooks.log(
      `[soak] after the load: ${afterLoad.fds} descriptors, ${afterLoad.sockets} sockets` +
        (afterLoad.settledInMs === null ? ' (did not settle)' : ` (settled in ${afterLoad.settledInMs} ms)`),
    );
  }

  return {
    backend,
    options,
    startedAt: new Date(Date.now() - now() * 1000).toISOString(),
    samples,
    baseline,
    afterLoad,
    chat: {
      requests: chatSummary.requests,
      errors: chatSummary.requests - chatSummary.served,
      timeouts: chatSummary.errorsByStatus.timeout ?? 0,
      slowestMs: chatSummary.slowestMs,
      errorsByOutcome: chatSummary.errorsByStatus,
    },
    mcp: tallyMcp(mcp.records),
    failures: [
      ...chat.records
        .filter((record) => !isServed(record.outcome))
        .map((record) => ({ ...record, kind: record.stream ? 'chat stream' : 'chat' })),
      ...mcp.records
        .filter((record) => record.outcome !== 'ok')
        .map((record) => ({ ...record, kind: record.operation })),
    ]
      .sort((a, b) => a.startedAt - b.startedAt)
      .slice(0, 200)
      .map((record) => ({
        t: Math.round((record.startedAt - origin) / 100) / 10,
        ms: Math.round(record.endedAt - record.startedAt),
        kind: record.kind,
        outcome: String(record.outcome),
      })),
    achievedRate: (chat.records.length + mcp.records.length) / loadSeconds,
    soakLagP99Ms: soakLag.percentile(99) / 1e6,
    gatewayLatency,
    gatewayLog: system.gateway.output().trimEnd().split('\n').slice(-200),
    gatewayExit,
  };
}

/** The gateway's own duration histograms (HTTP and MCP), to tell its latency from the machine's. */
async function latencyLines(baseUrl: string): Promise<string[]> {
  const text = await scrapeMetricsText(baseUrl).catch((error: Error) => `# scrape failed: ${error.message}`);
  return text
    .split('\n')
    .filter((line) => /^gateway_(http_request|mcp_tool_call)_duration_seconds_(bucket|count|sum)/.test(line));
}

/** Samples an idle gateway until the descriptor count holds still for three samples (or 15 s pass). */
async function settleBaseline(sample: (phase: Sample['phase']) => Promise<Sample>) {
  const deadline = performance.now() + 15_000;
  const seen: Sample[] = [];
  while (performance.now() < deadline) {
    seen.push(await sample('baseline'));
    const lastThree = seen.slice(-3);
    if (lastThree.length === 3 && lastThree.every((entry) => entry.fds === lastThree[0]!.fds)) break;
    await delay(500);
  }
  const last = seen.at(-1)!;
  return { fds: last.fds, sockets: last.sockets };
}

/** Polls until descriptors and sockets are back within the allowance of the baseline, or the deadline. */
async function settleAfterLoad(
  sample: (phase: Sample['phase']) => Promise<Sample>,
  baseline: { fds: number; sockets: number },
) {
  const start = performance.now();
  let last = await sample('settle');
  while (
    (last.fds > baseline.fds + DESCRIPTOR_ALLOWANCE ||
      last.sockets > baseline.sockets + DESCRIPTOR_ALLOWANCE) &&
    performance.now() - start < SETTLE_DEADLINE_MS
  ) {
    await delay(500);
    last = await sample('settle');
  }
  const settled =
    last.fds <= baseline.fds + DESCRIPTOR_ALLOWANCE &&
    last.sockets <= baseline.sockets + DESCRIPTOR_ALLOWANCE;
  return {
    fds: last.fds,
    sockets: last.sockets,
    settledInMs: settled ? Math.round(performance.now() - start) : null,
  };
}

function tallyMcp(records: readonly McpRecord[]): RequestTally {
  const errorsByOutcome: Record<string, number> = {};
  let slowestMs = 0;
  for (const record of records) {
    slowestMs = Math.max(slowestMs, record.endedAt - record.startedAt);
    if (record.outcome !== 'ok') errorsByOutcome[record.outcome] = (errorsByOutcome[record.outcome] ?? 0) + 1;
  }
  const errors = Object.values(errorsByOutcome).reduce((sum, count) => sum + count, 0);
  return {
    requests: records.length,
    errors,
    timeouts: errorsByOutcome.timeout ?? 0,
    slowestMs,
    errorsByOutcome,
  };
}

function errorsSoFar(chat: SteadyLoad, mcp: McpLoad): number {
  const summary = summarize(chat.records);
  return summary.requests - summary.served + mcp.records.filter((record) => record.outcome !== 'ok').length;
}

/** One line per 15 s: answered rate and errors so far, then the gateway's figures at this sample. */
function progressLine(current: Sample, previous: Sample, answered: number, errors: number): string {
  const seconds = current.t - previous.t;
  const cpu = seconds > 0 ? ((current.cpuSeconds - previous.cpuSeconds) / seconds) * 100 : 0;
  const rate = seconds > 0 ? answered / seconds : 0;
  const minutes = Math.floor(current.t / 60);
  const clock = `${minutes}:${String(Math.floor(current.t % 60)).padStart(2, '0')}`;
  return (
    `[soak] ${clock} rate ${rate.toFixed(1)}/s errors ${errors} | rss ${current.rssMb.toFixed(1)} MB heap ${current.heapUsedMb.toFixed(1)} MB` +
    ` | lag mean ${current.lagMeanMs.toFixed(1)} ms p99 ${current.lagP99Ms.toFixed(1)} ms` +
    ` | fds ${current.fds} sockets ${current.sockets} | cpu ${cpu.toFixed(0)} %`
  );
}
