/**
 * The benchmark's sequence: start the targets, warm each one up, then for every round run each phase
 * against every target in turn (A B C, A B C), so each comparison is made within a few seconds.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatRequestBody } from '../load/chat-request-body.ts';
import { availableClosedLoopTool, runClosedLoop } from '../load/closed-loop.ts';
import { clockTicksPerSecond } from '../measure/proc-stats.ts';
import type { BenchRun } from '../report/bench-report.ts';
import { GOAL_RATE } from '../report/goals.ts';
import { machineInfo } from '../report/machine-info.ts';
import { type CpuProfile, type ProfileSummary, summarizeProfile } from '../report/profile-summary.ts';
import type { BenchOptions } from './bench-options.ts';
import { hasTaskset } from './child-processes.ts';
import {
  type PhaseContext,
  type PhaseMeasurement,
  type PhasePlan,
  runOpenLoopProcess,
  runPhase,
} from './run-phase.ts';
import { type CpuPlan, type RunningTargets, startTargets, type Target } from './start-targets.ts';
import { runThroughputSlices } from './throughput-slices.ts';

export async function runBenchmark(
  options: BenchOptions,
  command: string,
  log: (line: string) => void,
): Promise<BenchRun> {
  const started = new Date();
  const workDirectory = mkdtempSync(join(tmpdir(), 'switchboard-bench-'));
  const pinned = options.pin && hasTaskset() && availableParallelism() >= 2;
  const cpus: CpuPlan = pinned ? { load: 0, proxy: 1 } : { load: undefined, proxy: undefined };
  // The orchestrator mostly sleeps, but keep it off the proxy's CPU all the same.
  if (pinned) execFileSync('taskset', ['-pc', '0', String(process.pid)], { stdio: 'ignore' });
  const tool = options.loadGenerator === 'auto' ? availableClosedLoopTool() : options.loadGenerator;
  const profileDirectory = options.profile ? join(workDirectory, 'profile') : undefined;
  if (profileDirectory) mkdirSync(profileDirectory);
  const context: PhaseContext = {
    options,
    tool,
    loadCpu: cpus.load,
    proxyCpu: cpus.proxy,
    ticksPerSecond: clockTicksPerSecond(),
    workDirectory,
    serverPids: [],
    quietWaitMs: options.quietWaitSeconds * 1000,
  };

  log(
    `Starting targets (${options.targets.join(', ')}); pinning ${pinned ? 'on' : 'off'}; closed loop by ${tool}.`,
  );
  let running: RunningTargets | undefined;
  let failed = true;
  let storeErrors: number | undefined;
  const measurements: PhaseMeasurement[] = [];
  try {
    running = await startTargets(options, cpus, workDirectory, profileDirectory);
    context.serverPids = running.serverPids;
    for (const note of running.notes) log(`Note: ${note}`);
    for (const target of running.targets) {
      log(`Warming up ${target.name}.`);
      await warmUp(target, context);
    }
    const plans = phasePlans(options);
    const targets = running.targets;
    for (let round = 1; round <= options.rounds; round++) {
      for (const plan of plans) {
        if (plan.phase === 'throughput') {
          for (const measurement of await runThroughputSlices(targets, plan, round, context)) {
            measurements.push(measurement);
            log(progressLine(measurement, options.rounds));
          }
          continue;
        }
        for (const target of targetsOf(plan, targets)) {
          const measurement = await runPhase(
            target,
            { ...plan, reference: referenceOf(plan, targets) },
            round,
            context,
          );
          measurements.push(measurement);
          log(progressLine(measurement, options.rounds));
        }
      }
    }
    storeErrors = await running.storeErrors();
    failed = false;
  } finally {
    await running?.stop();
    if (failed) {
      log(`Kept ${workDirectory} for inspection (Switchboard's log and configuration are there).`);
    }
  }
  const profile = profileDirectory
    ? readProfile(profileDirectory, options.outputDirectory, started)
    : undefined;
  if (profile) log(`Saved Switchboard's CPU profile as ${profile.file}.`);
  if (!failed) rmSync(workDirectory, { recursive: true, force: true });
  return {
    command,
    machine: machineInfo(started),
    options,
    tool,
    pinned,
    provider: running?.provider,
    limitHeaders: running?.limitHeaders ?? [],
    notes: running?.notes ?? [],
    measurements,
    storeErrors,
    wallSeconds: (Date.now() - started.getTime()) / 1000,
    profile,
  };
}

function phasePlans(options: BenchOptions): PhasePlan[] {
  const plans: PhasePlan[] = [];
  if (options.phases.includes('throughput')) plans.push({ phase: 'throughput' });
  if (options.phases.includes('latency'))
    for (const rate of options.rates) plans.push({ phase: 'latency', rate });
  if (options.phases.includes('stream')) plans.push({ phase: 'stream', rate: options.streamRate });
  if (options.phases.includes('admission')) plans.push({ phase: 'admission', rate: GOAL_RATE });
  for (const phase of ['responses', 'messages', 'cached', 'embeddings'] as const)
    if (options.phases.includes(phase)) plans.push({ phase, rate: GOAL_RATE });
  return plans;
}

function targetsOf(plan: PhasePlan, targets: readonly Target[]): readonly Target[] {
  if (plan.phase === 'admission') return admissionTargets(targets);
  // The translated phases and embeddings compare Switchboard with its floor, the upstream alone.
  if (plan.phase === 'responses' || plan.phase === 'messages' || plan.phase === 'embeddings')
    return targets.filter((target) => target.name === 'direct' || target.name === 'switchboard');
  // The cached phase compares Switchboard's hits with its own pass-through latency phase.
  if (plan.phase === 'cached') return targets.filter((target) => target.name === 'switchboard');
  return targets;
}

/** The admission phase runs once, against the limited key, when both keys are there. */
function admissionTargets(targets: readonly Target[]): Target[] {
  const limited = targets.find((target) => target.name === 'switchboard-limited');
  return limited && targets.some((target) => target.name === 'switchboard') ? [limited] : [];
}

function referenceOf(plan: PhasePlan, targets: readonly Target[]): Target | undefined {
  return plan.phase === 'admission' ? targets.find((target) => target.name === 'switchboard') : undefined;
}

/** Unmeasured load so that JIT compilation, connection pools and caches are warm before round 1. */
async function warmUp(target: Target, context: PhaseContext): Promise<void> {
  const { options } = context;
  const seconds = Math.max(1, Math.ceil(options.warmupSeconds * 2));
  await runClosedLoop({
    tool: context.tool,
    url: target.url,
    headers: target.headers,
    body: chatRequestBody(false),
    connections: options.concurrency,
    durationSeconds: seconds,
    cpu: context.loadCpu,
    workDirectory: context.workDirectory,
  });
  if (!options.phases.includes('stream')) return;
  await runOpenLoopProcess(
    {
      variants: [{ name: target.name, url: target.url, headers: target.headers }],
      body: chatRequestBody(true),
      ratePerSecond: options.streamRate * 2,
      durationMs: seconds * 1000,
      warmupMs: 0,
      stream: true,
      connections: 64,
      maxInFlight: 2_000,
      requestTimeoutMs: 10_000,
    },
    context.loadCpu,
  );
}

function progressLine(measurement: PhaseMeasurement, rounds: number): string {
  const milliseconds = (microseconds: number | undefined) =>
    microseconds === undefined ? '—' : `${(microseconds / 1000).toFixed(2)} ms`;
  const phase =
    measurement.phase === 'throughput' ? 'throughput' : `${measurement.phase} @${measurement.rate}`;
  const figures =
    measurement.phase === 'throughput'
      ? `${Math.round(measurement.requestsPerSecond ?? 0).toLocaleString('en-US')} req/s`
      : measurement.phase === 'stream'
        ? `TTFB p50 ${milliseconds(measurement.firstByte?.p50)}, TTLB p50 ${milliseconds(measurement.latency?.p50)}`
        : measurement.phase === 'admission'
          ? `p50 ${milliseconds(measurement.latency?.p50)} limited vs ${milliseconds(measurement.referenceLatency?.p50)} unlimited`
          : `p50 ${milliseconds(measurement.latency?.p50)}, p99 ${milliseconds(measurement.latency?.p99)}`;
  const cpu =
    measurement.cpuMicrosecondsPerRequest === undefined
      ? ''
      : `, ${measurement.cpuMicrosecondsPerRequest.toFixed(0)} µs CPU/req`;
  const failed = measurement.errors + measurement.non2xx + measurement.dropped;
  return (
    `round ${measurement.round}/${rounds}  ${phase.padEnd(16)} ${measurement.target.padEnd(20)} ${figures}${cpu}, ` +
    `steal ${(measurement.stealPercent ?? 0).toFixed(1)}%, other load ${(measurement.otherLoadPercent ?? 0).toFixed(0)}%` +
    (failed ? `, ${failed} FAILED` : '')
  );
}

/** Summarises Switchboard's profile and keeps a copy beside the reports (open it in Chrome DevTools). */
function readProfile(
  directory: string,
  outputDirectory: string,
  started: Date,
): (ProfileSummary & { file: string }) | undefined {
  const name = readdirSync(directory).find((entry) => entry.endsWith('.cpuprofile'));
  if (!name) return undefined;
  mkdirSync(outputDirectory, { recursive: true });
  const file = join(outputDirectory, `${reportStamp(started)}-switchboard.cpuprofile`);
  copyFileSync(join(directory, name), file);
  return { ...summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, 20), file };
}

/** File-name stamp of a run: 2026-11-23T19-30-05Z. */
export function reportStamp(date: Date): string {
  return `${date.toISOString().slice(0, 19).replaceAll(':', '-')}Z`;
}
