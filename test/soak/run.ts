/**
 * `npm run soak` (10 minutes) and `npm run soak:ci` (2 minutes, part of `npm test`): the gateway under a
 * steady chat + MCP load, judged on slopes of RSS and event-loop lag, descriptors back to baseline, and
 * errors and deadlines. Prints progress and a verdict table, writes samples and verdicts as JSON to
 * .soak-report/, and exits 0 (pass), 1 (fail) or 2 (bad flags). `--help` lists the flags.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { REQUIRE_REAL_BACKENDS, realBackendsAvailable } from '../support/test-env.ts';
import { judge } from './judge.ts';
import { parseSoakOptions, type SoakOptions, USAGE, UsageError } from './options.ts';
import { runSoak, type SoakRun } from './soak.ts';
import { type BackendKind, startSoakSystem } from './soak-gateway.ts';
import { renderVerdicts } from './verdicts.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<number> {
  let options: SoakOptions | 'help';
  try {
    options = parseSoakOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`soak: ${error.message}\nRun 'npm run soak -- --help' for usage.`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (options.judge) {
    // Re-judging a saved run: bounds can be recalibrated on its samples without running again.
    const judgement = judge(JSON.parse(readFileSync(options.judge, 'utf8')) as SoakRun);
    log(renderVerdicts(judgement.verdicts));
    return judgement.pass ? 0 : 1;
  }
  const backend = await chooseBackend(options.backend);
  const loadBefore = loadavg();
  log(
    `[soak] ${options.minutes} min at ${options.rate} req/s on the ${backend} backend, a sample every ${options.sampleSeconds} s`,
  );
  log(
    `[soak] machine: ${cpus().length} cores, load average ${loadBefore.map((value) => value.toFixed(2)).join(' ')}`,
  );

  let interrupted = false;
  process.on('SIGINT', () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log('[soak] interrupted: ending the load now and judging what was measured (Ctrl-C again to quit)');
  });

  const system = await startSoakSystem(backend);
  let run: Awaited<ReturnType<typeof runSoak>>;
  try {
    run = await runSoak(system, backend, options, { log, interrupted: () => interrupted });
  } finally {
    await system.close();
  }
  const judgement = judge(run);
  const report = {
    command: `node test/soak/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
    machine: {
      cores: cpus().length,
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg(),
      node: process.version,
    },
    ...run,
    achievedRate: round(run.achievedRate),
    soakLagP99Ms: round(run.soakLagP99Ms),
    pass: judgement.pass,
    verdicts: judgement.verdicts,
    figures: judgement.figures,
  };
  mkdirSync(options.reportDir, { recursive: true });
  const file = join(
    options.reportDir,
    `soak-${run.startedAt.replaceAll(':', '-').replace(/\.\d+Z$/, 'Z')}.json`,
  );
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);

  log('');
  log(renderVerdicts(judgement.verdicts));
  log('');
  log(
    renderVerdicts(
      judgement.figures.map((figure) => ({ ...figure, pass: true, bound: 'reported only' })),
    ).replaceAll('PASS', 'info'),
  );
  log('');
  log(
    `[soak] chat ${run.chat.requests} requests, MCP ${run.mcp.requests} calls, ${report.achievedRate} req/s achieved;` +
      ` soak process lag p99 ${report.soakLagP99Ms} ms; errors ${JSON.stringify({ ...run.chat.errorsByOutcome, ...prefixed(run.mcp.errorsByOutcome) })}`,
  );
  log(`[soak] ${judgement.pass ? 'PASS' : 'FAIL'}; samples and verdicts in ${file}`);
  return judgement.pass ? 0 : 1;
}

/** auto: production when PostgreSQL and Redis answer (required under REQUIRE_REAL_BACKENDS=1), else embedded. */
async function chooseBackend(wanted: SoakOptions['backend']): Promise<BackendKind> {
  if (wanted !== 'auto') return wanted;
  if (await realBackendsAvailable()) return 'production';
  log(
    `[soak] PostgreSQL or Redis not reachable${REQUIRE_REAL_BACKENDS ? '' : ': using the embedded backend'}`,
  );
  return 'embedded';
}

function prefixed(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([outcome, count]) => [`mcp ${outcome}`, count]));
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    log(`soak: ${(error as Error).stack ?? error}`);
    process.exit(1);
  },
);
