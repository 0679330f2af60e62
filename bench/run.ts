/**
 * `npm run bench`: Switchboard's chat proxy against the raw upstream (floor) and a bare pass-through
 * proxy (ceiling) on loopback; prints one markdown table and writes it to bench/results/. Never part
 * of `npm test`. `npm run bench -- --help` lists the flags; docs/performance.md explains the method.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderReport } from './report/bench-report.ts';
import { BenchUsageError, HELP, parseBenchOptions } from './run/bench-options.ts';
import { reportStamp, runBenchmark } from './run/benchmark.ts';
import { killAllNow, stopAll } from './run/child-processes.ts';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  let options: ReturnType<typeof parseBenchOptions>;
  try {
    options = parseBenchOptions(argv);
  } catch (error) {
    if (!(error instanceof BenchUsageError) && !(error instanceof TypeError)) throw error;
    process.stderr.write(`bench: ${error.message}\nRun 'npm run bench -- --help' for usage.\n`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const command = `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const run = await runBenchmark(options, command, log);
  const report = renderReport(run);
  mkdirSync(options.outputDirectory, { recursive: true });
  const stamp = reportStamp(new Date(run.machine.date));
  const file = join(options.outputDirectory, `${stamp}.md`);
  writeFileSync(file, report);
  writeFileSync(join(options.outputDirectory, `${stamp}.json`), `${JSON.stringify(run, null, 2)}\n`);
  process.stdout.write(`\n${report}`);
  log(`\nWritten to ${file} (raw figures beside it as .json).`);
  return 0;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping every process it started.\n`);
    stopAll().finally(() => process.exit(130));
  });
}
process.on('exit', killAllNow);

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    stopAll().finally(() => process.exit(1));
  },
);
