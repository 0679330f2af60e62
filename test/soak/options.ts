/** The soak CLI's flags: parsed, checked and explained by --help. */
import { parseArgs } from 'node:util';
import type { BackendKind } from './soak-gateway.ts';

export interface SoakOptions {
  minutes: number;
  /** Requests started per second, chat and MCP together. */
  rate: number;
  sampleSeconds: number;
  backend: BackendKind | 'auto';
  reportDir: string;
  /** A saved report to judge again with the current bounds, instead of running. */
  judge: string | undefined;
}

export const USAGE = `Usage: npm run soak -- [options]     (node test/soak/run.ts [options])

Runs the gateway (the real CLI, a child process) against fake upstreams at a steady rate for a bounded
time, samples its RSS, event-loop lag, descriptors and sockets, and fails when RSS or lag trend upward
after the warm-up, when descriptors do not return to their baseline once the load stops, or when
requests fail or pass their deadline. Exit status 0 (pass), 1 (fail), 2 (bad flags).

Options:
  --minutes N         length of the load phase (default 10; CI runs 2)
  --rate R            requests started per second, all kinds together (default 40): 70 % chat
                      completions (half of them streamed), 30 % MCP (tools/list and tools/call)
  --sample-seconds S  seconds between samples of the gateway process (default 5, or 2 for runs under
                      5 minutes, so the fit after the warm-up still has enough points)
  --backend B         production (PostgreSQL schema + Redis prefix on the shared test servers),
                      embedded (SQLite + in-process store), or auto (default: production when both
                      servers answer, else embedded; with REQUIRE_REAL_BACKENDS=1 they must answer)
  --report-dir DIR    where samples and verdicts are written as JSON (default .soak-report)
  --judge FILE        judge a saved report again with the current bounds (no run)
  --help              this text
`;

export class UsageError extends Error {}

export function parseSoakOptions(argv: readonly string[]): SoakOptions | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        minutes: { type: 'string', default: '10' },
        rate: { type: 'string', default: '40' },
        'sample-seconds': { type: 'string' },
        backend: { type: 'string', default: 'auto' },
        'report-dir': { type: 'string', default: '.soak-report' },
        judge: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return 'help';
  const backend = String(values.backend);
  if (backend !== 'production' && backend !== 'embedded' && backend !== 'auto')
    throw new UsageError(`--backend must be production, embedded or auto, not ${backend}`);
  const minutes = positive('--minutes', values.minutes, 0.25);
  return {
    minutes,
    rate: positive('--rate', values.rate, 1),
    // A 2-minute run fits ~48 s after its warm-up: every 2 s gives ~24 points, every 5 s too few.
    sampleSeconds:
      values['sample-seconds'] === undefined
        ? minutes < 5
          ? 2
          : 5
        : positive('--sample-seconds', values['sample-seconds'], 1),
    backend,
    reportDir: String(values['report-dir']),
    judge: typeof values.judge === 'string' ? values.judge : undefined,
  };
}

function positive(flag: string, raw: unknown, minimum: number): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < minimum)
    throw new UsageError(`${flag} must be a number ≥ ${minimum}, not ${raw}`);
  return value;
}
