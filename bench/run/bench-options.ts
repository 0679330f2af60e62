/** The flags of `npm run bench`, their defaults, `--quick`, and the help text. */
import { parseArgs } from 'node:util';

export const TARGET_NAMES = ['direct', 'bare', 'switchboard', 'switchboard-limited'] as const;
export const PHASE_NAMES = [
  'throughput',
  'latency',
  'stream',
  'admission',
  'responses',
  'messages',
  'cached',
  'embeddings',
] as const;

export type TargetName = (typeof TARGET_NAMES)[number];
export type PhaseName = (typeof PHASE_NAMES)[number];

export interface BenchOptions {
  targets: TargetName[];
  phases: PhaseName[];
  rounds: number;
  /** Measured seconds of each phase. */
  durationSeconds: number;
  /** Unmeasured seconds at the start of each open-loop phase, and per target before the first round. */
  warmupSeconds: number;
  concurrency: number;
  rates: number[];
  streamRate: number;
  chunks: number;
  chunkDelayMs: number;
  loadGenerator: 'auto' | 'wrk' | 'autocannon';
  provider: 'auto' | 'openai' | 'fake';
  pin: boolean;
  /** Longest wait, before each phase, for processes outside the benchmark to quieten down. */
  quietWaitSeconds: number;
  profile: boolean;
  /** Run Switchboard on a private redis-server instead of its in-process counters. */
  redis: boolean;
  /** Switchboard's spend_ingestion_mode (the cost of accounting in each mode). */
  spendMode: 'legacy' | 'outbox';
  /** Extra Node flags for the Switchboard process, for experiments (e.g. --max-semi-space-size=16). */
  switchboardNodeFlags: string[];
  outputDirectory: string;
  quick: boolean;
}

export const HELP = `npm run bench -- [options]

Benchmarks Switchboard's chat proxy on loopback against two references measured in the same run:
the raw upstream alone (direct, the floor) and a bare undici pass-through proxy (bare, the ceiling).
Each phase runs every selected target in turn, and the whole sequence runs --rounds times
(interleaved: A B C A B C), so every comparison is within one round.

Targets (--targets, comma-separated; default all):
  direct                the raw upstream itself
  bare                  a ~30-line node:http + undici pass-through proxy
  switchboard           Switchboard (src/main.ts, one worker, auth on) with a key without limits
  switchboard-limited   the same Switchboard with a key whose organization, team, user and key
                        all carry generous limits (issue 4's admission cost)

Phases (--phases, comma-separated; default all):
  throughput   closed loop at --concurrency connections (wrk if installed, else autocannon)
  latency      open loop at each of --rates req/s: p50/p90/p99 from send to last byte
  stream       open loop streams at --stream-rate req/s: time to first byte and to last byte
  admission    open loop at 200 req/s alternating Switchboard's two keys request by request:
               the limited key's added p50 without drift between phases (issue 4)
  responses    open loop at 200 req/s: Switchboard answers the same conversation on /v1/responses
               (translated to chat upstream); the direct target answers it as chat, the floor
  messages     the same on /v1/messages (Anthropic Messages, translated to chat upstream)
  cached       open loop at 200 req/s with a key whose answers come from the response cache: every
               request after the first is a hit; compared with the pass-through latency phase
  embeddings   open loop at 200 req/s on /v1/embeddings: four passages in, four 1,536-dimension
               base64 vectors out (as the openai SDK asks), against the upstream answering it alone

Options:
  --quick                 one round of 2-second phases (about a minute)
  --rounds N              interleaved rounds (default 2; --quick 1)
  --duration S            measured seconds per phase (default 5; --quick 2)
  --warmup S              warm-up seconds (default 1; --quick 0.5)
  --concurrency N         closed-loop connections (default 32)
  --rates R1,R2           open-loop offered rates in req/s (default 200,1000)
  --stream-rate R         streaming offered rate in req/s (default 100)
  --chunks N              content chunks per upstream stream (default 20)
  --chunk-delay-ms MS     upstream pause between stream events (default 2)
  --load-generator T      auto, wrk or autocannon (default auto: wrk when installed)
  --provider P            auto, openai or fake: Switchboard's deployment provider
                          (default auto: openai, or fake when this build has no openai adapter)
  --no-pin                do not pin processes with taskset
  --quiet-wait S          before each phase, wait up to S seconds while processes outside the
                          benchmark use more than 10% of the machine (default 3; --quick 1; 0: never)
  --redis                 give Switchboard a private redis-server (pinned beside the upstream) as its
                          shared store, as in production, instead of in-process counters
  --spend-mode M          Switchboard's spend_ingestion_mode: legacy (default) or outbox, to
                          measure what durable accounting costs (docs/spend.md)
  --profile               run Switchboard with --cpu-prof and print its top self-time functions
  --node-flags="F …"      extra Node flags for the Switchboard process, for experiments
                          (e.g. --node-flags=--max-semi-space-size=16); the report names them
  --output DIR            where the report is written (default bench/results)
  -h, --help              this help

Output: one markdown table on stdout and in DIR/<timestamp>.md (raw figures in <timestamp>.json).
Method and recorded runs: docs/performance.md.`;

export function parseBenchOptions(argv: string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      targets: { type: 'string' },
      phases: { type: 'string' },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      concurrency: { type: 'string', default: '32' },
      rates: { type: 'string', default: '200,1000' },
      'stream-rate': { type: 'string', default: '100' },
      chunks: { type: 'string', default: '20' },
      'chunk-delay-ms': { type: 'string', default: '2' },
      'load-generator': { type: 'string', default: 'auto' },
      provider: { type: 'string', default: 'auto' },
      'no-pin': { type: 'boolean', default: false },
      'quiet-wait': { type: 'string' },
      profile: { type: 'boolean', default: false },
      redis: { type: 'boolean', default: false },
      'spend-mode': { type: 'string', default: 'legacy' },
      'node-flags': { type: 'string', default: '' },
      output: { type: 'string', default: 'bench/results' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const quick = values.quick;
  return {
    targets: listOption('--targets', values.targets, TARGET_NAMES),
    phases: listOption('--phases', values.phases, PHASE_NAMES),
    rounds: numberOption('--rounds', values.rounds ?? (quick ? '1' : '2'), 1, 10, true),
    durationSeconds: numberOption('--duration', values.duration ?? (quick ? '2' : '5'), 1, 120, true),
    warmupSeconds: numberOption('--warmup', values.warmup ?? (quick ? '0.5' : '1'), 0, 60, false),
    concurrency: numberOption('--concurrency', values.concurrency, 1, 1024, true),
    rates: values.rates.split(',').map((rate) => numberOption('--rates', rate.trim(), 1, 20_000, true)),
    streamRate: numberOption('--stream-rate', values['stream-rate'], 1, 5_000, true),
    chunks: numberOption('--chunks', values.chunks, 1, 1_000, true),
    chunkDelayMs: numberOption('--chunk-delay-ms', values['chunk-delay-ms'], 0, 1_000, true),
    loadGenerator: choiceOption('--load-generator', values['load-generator'], ['auto', 'wrk', 'autocannon']),
    provider: choiceOption('--provider', values.provider, ['auto', 'openai', 'fake']),
    pin: !values['no-pin'],
    quietWaitSeconds: numberOption('--quiet-wait', values['quiet-wait'] ?? (quick ? '1' : '3'), 0, 60, false),
    profile: values.profile,
    redis: values.redis,
    spendMode: choiceOption('--spend-mode', values['spend-mode'], ['legacy', 'outbox']),
    switchboardNodeFlags: values['node-flags'].split(/\s+/).filter(Boolean),
    outputDirectory: values.output,
    quick,
  };
}

export class BenchUsageError extends Error {}

function listOption<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T[] {
  if (value === undefined) return [...allowed];
  const items = value.split(',').map((item) => item.trim());
  for (const item of items) {
    if (!allowed.includes(item as T)) {
      throw new BenchUsageError(`${flag}: unknown '${item}' (choose from ${allowed.join(', ')})`);
    }
  }
  // Keep the canonical order, so tables read the same whatever order the flags used.
  return allowed.filter((name) => items.includes(name));
}

function numberOption(flag: string, value: string, min: number, max: number, integer: boolean): number {
  const number = Number(value);
  if (
    value === '' ||
    !Number.isFinite(number) ||
    number < min ||
    number > max ||
    (integer && !Number.isInteger(number))
  ) {
    throw new BenchUsageError(
      `${flag} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max} (got '${value}')`,
    );
  }
  return number;
}

function choiceOption<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if (!allowed.includes(value as T))
    throw new BenchUsageError(`${flag} must be one of ${allowed.join(', ')}`);
  return value as T;
}
