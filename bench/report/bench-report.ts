/**
 * Renders a benchmark run as markdown: header lines (command, commit, Node, CPU, date, method), the
 * summary table, the goals with their verdicts, notes on anything that weakens the figures, and the
 * per-phase detail.
 */
import type { ClosedLoopTool } from '../load/closed-loop.ts';
import type { BenchOptions } from '../run/bench-options.ts';
import type { PhaseMeasurement } from '../run/run-phase.ts';
import type { SwitchboardProvider } from '../servers/switchboard-target.ts';
import { evaluateGoals } from './goals.ts';
import type { MachineInfo } from './machine-info.ts';
import { markdownTable } from './markdown-table.ts';
import type { ProfileSummary } from './profile-summary.ts';
import { summarizeTargets } from './target-summary.ts';

export interface BenchRun {
  command: string;
  machine: MachineInfo;
  options: BenchOptions;
  tool: ClosedLoopTool;
  pinned: boolean;
  provider: SwitchboardProvider | undefined;
  limitHeaders: string[];
  notes: string[];
  measurements: PhaseMeasurement[];
  /** Switchboard's rate-limit store errors at the end of the run. */
  storeErrors?: number;
  wallSeconds: number;
  profile?: ProfileSummary;
}

const STEAL_WARNING_PERCENT = 5;
const OTHER_LOAD_WARNING_PERCENT = 10;
const LAG_WARNING_MICROSECONDS = 5_000;

export const format = {
  milliseconds: (microseconds: number | undefined) =>
    microseconds === undefined ? '—' : (microseconds / 1000).toFixed(2),
  added: (microseconds: number | undefined) =>
    microseconds === undefined
      ? '—'
      : `${microseconds < 0 ? '−' : '+'}${(Math.abs(microseconds) / 1000).toFixed(2)}`,
  count: (value: number | undefined) =>
    value === undefined ? '—' : Math.round(value).toLocaleString('en-US'),
  percent: (fraction: number | undefined) =>
    fraction === undefined ? '—' : `${(fraction * 100).toFixed(0)}%`,
  megabytes: (kilobytes: number | undefined) =>
    kilobytes === undefined ? '—' : ((kilobytes * 1024) / 1e6).toFixed(0),
  steal: (percent: number | undefined) => (percent === undefined ? '—' : percent.toFixed(1)),
};

export function renderReport(run: BenchRun): string {
  const { options } = run;
  const sections = [
    `# Switchboard benchmark, ${run.machine.date.slice(0, 16).replace('T', ' ')} UTC`,
    headerLines(run).join('\n'),
    '## Results',
    summaryTable(run),
    '## Goals',
    goalsTable(run),
  ];
  const notes = reportNotes(run);
  if (notes.length) sections.push('## Notes', notes.map((note) => `- ${note}`).join('\n'));
  sections.push('## Every phase', detailTable(run.measurements, options));
  if (run.profile)
    sections.push('## Where Switchboard spends its CPU (self time, --profile)', profileTables(run.profile));
  return `${sections.join('\n\n')}\n`;
}

function headerLines(run: BenchRun): string[] {
  const { options, machine } = run;
  const pinning = run.pinned
    ? 'upstream and load generators on CPU 0, the proxy under test on CPU 1 (taskset)'
    : 'none (no taskset or fewer than 2 CPUs, or --no-pin)';
  const closedLoop = run.tool === 'wrk' ? 'wrk -t1' : 'autocannon';
  return [
    `- Command: \`${run.command}\` (${Math.round(run.wallSeconds)} s)`,
    `- Commit: ${machine.commit} · Node ${machine.node} · ${machine.cpu} · ${machine.kernel}`,
    `- Pinning: ${pinning}`,
    `- Load: throughput by ${closedLoop} at ${options.concurrency} connections; latency by an open-loop ` +
      `client (hrtime, undici) at ${options.rates.join(' and ')} req/s; streams at ${options.streamRate} req/s`,
    `- Phases: ${options.durationSeconds} s measured each (open loop after ${options.warmupSeconds} s warm-up), ` +
      `${options.rounds} round${options.rounds > 1 ? 's' : ''} interleaved; ratios and added latency within a round`,
    `- Upstream: raw node:http; streams of ${options.chunks} content chunks, ${options.chunkDelayMs} ms apart` +
      (run.provider
        ? `; Switchboard: provider \`${run.provider}\`, one worker, auth on, request logging on, ` +
          (options.redis ? 'Redis shared store (private redis-server on CPU 0)' : 'embedded in-process store')
        : '') +
      (options.switchboardNodeFlags.length
        ? `, Node flags \`${options.switchboardNodeFlags.join(' ')}\``
        : ''),
  ];
}

function summaryTable(run: BenchRun): string {
  const { rates } = run.options;
  const headers = [
    'target',
    'round',
    `req/s @${run.options.concurrency}`,
    'vs bare',
    ...rates.flatMap((rate) => [`p50 @${rate}`, `p99 @${rate}`, `+p50 @${rate}`]),
    'TTFB p50',
    'TTFB p99',
    '+TTFB p50',
    'TTLB p50',
    'peak RSS MB',
    `CPU µs/req`,
    'steal %',
    'other %',
    'failed',
  ];
  const rows = summarizeTargets(run.measurements).map((summary) => [
    summary.target,
    String(summary.round),
    format.count(summary.requestsPerSecond),
    format.percent(summary.throughputVsBare),
    ...rates.flatMap((rate) => {
      const latency = summary.latencyByRate.get(rate);
      const added = summary.target === 'direct' ? undefined : summary.addedP50ByRate.get(rate);
      return [format.milliseconds(latency?.p50), format.milliseconds(latency?.p99), format.added(added)];
    }),
    format.milliseconds(summary.firstByte?.p50),
    format.milliseconds(summary.firstByte?.p99),
    format.added(summary.target === 'direct' ? undefined : summary.addedFirstByteP50),
    format.milliseconds(summary.lastByteP50),
    format.megabytes(summary.peakResidentKilobytes),
    summary.cpuMicrosecondsPerRequest === undefined ? '—' : summary.cpuMicrosecondsPerRequest.toFixed(0),
    format.steal(summary.stealPercentMax),
    format.count(summary.otherLoadPercentMax),
    String(summary.failures),
  ]);
  const legend =
    'Latencies in ms (p50/p99 from send to last byte at each offered rate; `+` is added over direct in the same ' +
    `round). TTFB/TTLB: streaming time to first/last body byte at ${run.options.streamRate} req/s. CPU µs/req: the ` +
    `proxy process's utime+stime over the ${Math.max(...rates)} req/s phase (else the throughput phase) divided by ` +
    'the requests it served. ' +
    'Steal (the hypervisor) and other % (CPU used by processes outside the benchmark, share of the machine): the ' +
    'worst phase of the target in that round. Failed: errors, non-2xx and dropped requests.';
  return `${markdownTable(headers, rows)}\n\n${legend}`;
}

function goalsTable(run: BenchRun): string {
  const goals = evaluateGoals(summarizeTargets(run.measurements), run.options.rounds);
  const roundHeaders = Array.from({ length: run.options.rounds }, (_, index) => `round ${index + 1}`);
  return markdownTable(
    ['goal', ...roundHeaders, 'verdict'],
    goals.map((goal) => [goal.goal, ...goal.perRound, goal.verdict.toUpperCase()]),
  );
}

function reportNotes(run: BenchRun): string[] {
  const notes = [...run.notes];
  if (
    run.options.targets.includes('switchboard-limited') &&
    run.measurements.some((measurement) => measurement.target === 'switchboard-limited')
  ) {
    notes.push(
      run.limitHeaders.length
        ? `Identity limits are enforced: the limited key's answers carry ${run.limitHeaders.map((name) => `\`${name}\``).join(', ')}.`
        : "The limited key's answers carry no `x-ratelimit-*` headers: this build does not enforce identity limits yet, " +
            'so the admission-cost line measures only what the stored limit fields cost today.',
    );
  }
  if (run.storeErrors) {
    notes.push(
      `Switchboard counted ${run.storeErrors} rate-limit store error(s) (\`gateway_ratelimit_store_errors_total\`): ` +
        'some admissions fell back to local counters, which are cheaper than a Redis round trip.',
    );
  }
  const stolen = run.measurements.filter(
    (measurement) => (measurement.stealPercent ?? 0) > STEAL_WARNING_PERCENT,
  );
  if (stolen.length) {
    const worst = Math.max(...stolen.map((measurement) => measurement.stealPercent!));
    notes.push(
      `Steal above ${STEAL_WARNING_PERCENT}% in ${stolen.length} phase(s) (worst ${worst.toFixed(1)}%): the host took CPU ` +
        'from this machine there; compare those rows with care.',
    );
  }
  const crowded = run.measurements.filter(
    (measurement) => (measurement.otherLoadPercent ?? 0) > OTHER_LOAD_WARNING_PERCENT,
  );
  if (crowded.length) {
    const worst = Math.max(...crowded.map((measurement) => measurement.otherLoadPercent!));
    notes.push(
      `Processes outside the benchmark used more than ${OTHER_LOAD_WARNING_PERCENT}% of the machine in ` +
        `${crowded.length} phase(s) (worst ${worst.toFixed(0)}%): pinning cannot keep them off our CPUs, so ` +
        'those figures (tails most of all) are pessimistic; re-run on a quiet machine.',
    );
  }
  const waited = run.measurements.filter((measurement) => (measurement.quietWaitMs ?? 0) > 0);
  if (waited.length) {
    const seconds = waited.reduce((sum, measurement) => sum + measurement.quietWaitMs!, 0) / 1000;
    notes.push(
      `${waited.length} phase(s) waited for other processes to quieten down before starting (${seconds.toFixed(1)} s ` +
        `in all, at most ${run.options.quietWaitSeconds} s each).`,
    );
  }
  const lagging = run.measurements.filter(
    (measurement) => (measurement.scheduleLagP99 ?? 0) > LAG_WARNING_MICROSECONDS,
  );
  if (lagging.length) {
    notes.push(
      `The open-loop client fell behind its schedule by more than ${LAG_WARNING_MICROSECONDS / 1000} ms at p99 in ` +
        `${lagging.length} phase(s): the offered rate there was burstier than intended.`,
    );
  }
  for (const measurement of run.measurements.filter(
    (measurement) => measurement.errors + measurement.non2xx + measurement.dropped > 0,
  )) {
    notes.push(
      `${measurement.target}, round ${measurement.round}, ${phaseLabel(measurement)}: ${measurement.errors} errors, ${measurement.non2xx} non-2xx, ${measurement.dropped} dropped` +
        (measurement.firstError ? ` (first: ${measurement.firstError.slice(0, 160)})` : ''),
    );
  }
  return notes;
}

function phaseLabel(measurement: PhaseMeasurement): string {
  return measurement.phase === 'throughput' ? 'throughput' : `${measurement.phase} @${measurement.rate}`;
}

function detailTable(measurements: readonly PhaseMeasurement[], options: BenchOptions): string {
  const rows = measurements.map((measurement) => [
    String(measurement.round),
    measurement.phase === 'throughput'
      ? `throughput c${options.concurrency}`
      : `${measurement.phase} @${measurement.rate}`,
    measurement.target,
    format.count(measurement.requests),
    measurement.requestsPerSecond === undefined ? '—' : format.count(measurement.requestsPerSecond),
    format.milliseconds(measurement.latency?.p50),
    format.milliseconds(measurement.latency?.p90),
    format.milliseconds(measurement.latency?.p99),
    format.milliseconds(measurement.firstByte?.p50),
    format.milliseconds(measurement.referenceLatency?.p50),
    String(measurement.errors + measurement.non2xx + measurement.dropped),
    measurement.cpuMicrosecondsPerRequest === undefined
      ? '—'
      : measurement.cpuMicrosecondsPerRequest.toFixed(0),
    format.megabytes(measurement.peakResidentKilobytes),
    format.steal(measurement.stealPercent),
    format.steal(measurement.proxyCpuStealPercent),
    format.count(measurement.otherLoadPercent),
    format.milliseconds(measurement.scheduleLagP99),
  ]);
  return (
    `${markdownTable(
      [
        'round',
        'phase',
        'target',
        'ok',
        'req/s',
        'p50',
        'p90',
        'p99',
        'TTFB p50',
        'unlimited p50',
        'failed',
        'CPU µs/req',
        'RSS MB',
        'steal %',
        'steal % proxy CPU',
        'other %',
        'client lag p99',
      ],
      rows,
    )}\n\nLatencies in ms; throughput latencies are the closed-loop tool's own (autocannon's move in 1 ms steps). ` +
    'Admission rows: the limited key (p50…p99) and the unlimited key (unlimited p50), sent alternately.'
  );
}

function profileTables(profile: ProfileSummary): string {
  const rows = (entries: ProfileSummary['modules']) =>
    entries.map((entry) => [
      entry.name,
      (entry.selfMicroseconds / 1000).toFixed(0),
      format.percent(entry.share),
    ]);
  return [
    `Busy ${(profile.busyMicroseconds / 1e6).toFixed(1)} s, idle ${(profile.idleMicroseconds / 1e6).toFixed(1)} s over the whole run.`,
    markdownTable(['module', 'self ms', 'share of busy'], rows(profile.modules)),
    markdownTable(['function', 'self ms', 'share of busy'], rows(profile.functions)),
  ].join('\n\n');
}
