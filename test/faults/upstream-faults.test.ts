/**
 * Misbehaving upstreams under steady load against two gateway processes (issue 18). For each fault the
 * hostile upstream is switched to it while three callers send a mix of streaming and non-streaming
 * requests: one to `pair` (the hostile deployment and a healthy one: failover must carry it), one to
 * `solo` (the hostile deployment alone: the fault reaches the caller) and one to `calm` (a healthy
 * model: another caller's model must not notice). Rules checked per fault:
 * - no gateway process crashes, and every request ends within the request deadline (no stall);
 * - a failure reaches the caller as a clean 502/503/504 with the documented code, or as one in-band
 *   error event on a stream that had started; never a 500 and never the provider's own body;
 * - with a healthy second deployment the failover shows (answers after more than one attempt) and
 *   availability stays high; the healthy model of another caller serves everything;
 * - peak resident memory stays bounded on oversize and endless input;
 * - afterwards the gateways have hung up on the upstream and no `max_parallel_requests` slot leaked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HostileMode, LEAK_MARKER } from '../fakes/hostile-upstream.ts';
import { recordScenario } from './support/fault-report.ts';
import {
  ATTEMPT_TIMEOUT_S,
  DEADLINE_MS,
  REQUEST_TIMEOUT_S,
  STREAM_TIMEOUT_S,
  UpstreamCluster,
} from './support/upstream-cluster.ts';
import { type Answer, tally, UpstreamLoad } from './support/upstream-load.ts';

const LOAD_MS = 2_500;
const PARALLEL_LIMIT = 40;
/** Peak RSS a process may add during one scenario; an 80 MiB answer read whole per request would pass it. */
const MEMORY_BOUND_MB = 200;
/** The most the gateway reads of one answer (docs/operations.md), hence holds for one flooding answer. */
const READ_LIMIT_MB = 64;
/**
 * What the sockets between the hostile upstream and a gateway hold beyond what the gateway read: the
 * receive buffer (net.ipv4.tcp_rmem allows 32 MiB here), the send buffer (4 MiB) and one written piece.
 */
const SOCKET_SLACK_MB = 48;

interface Fault {
  mode: HostileMode;
  scenario: string;
  ratePerSecond: number;
  /** Documented codes a caller may get for this fault (errors and in-band events). */
  codes: string[];
  /** endless-line: drip 1 KiB every this many ms instead of flooding. */
  dripMs?: number;
  /** The upstream sends bytes as fast as loopback allows: the machine's CPU is the bottleneck. */
  floods?: boolean;
  /** The fault is the request's own doing (not retried, not counted against the deployment). */
  callersFault?: boolean;
  /** The model the solo caller sends to (default `solo`): `solo-long` has a longer attempt timeout. */
  soloModel?: 'solo' | 'solo-long';
}

const UPSTREAM_CODES = ['upstream_error', 'upstream_timeout', 'upstream_unreachable', 'request_timeout'];

const FAULTS: Fault[] = [
  { mode: 'hang', scenario: 'upstream accepts and never answers', ratePerSecond: 6, codes: UPSTREAM_CODES },
  {
    mode: 'reset-mid-stream',
    scenario: 'upstream resets the connection after 3 SSE chunks (mid-JSON when not streaming)',
    ratePerSecond: 6,
    codes: UPSTREAM_CODES,
  },
  {
    mode: 'slow-first-byte',
    scenario: `upstream sends its first byte after 6 s (attempt timeout ${ATTEMPT_TIMEOUT_S} s, stream silence ${STREAM_TIMEOUT_S} s, request deadline ${REQUEST_TIMEOUT_S} s)`,
    ratePerSecond: 6,
    codes: UPSTREAM_CODES,
  },
  {
    mode: 'garbage-sse',
    scenario: 'upstream sends non-JSON, binary and invalid UTF-8 data lines (binary JSON when not streaming)',
    ratePerSecond: 6,
    codes: UPSTREAM_CODES,
  },
  {
    mode: 'endless-line',
    scenario: 'upstream sends one chunk, then a line that never ends, as fast as it can (bytes, no newline)',
    ratePerSecond: 3,
    // A JSON answer that never ends is an oversize answer once it passes the 64 MiB read limit (a quiet
    // machine gets there before the 2 s attempt timeout): the oversize rule applies, not retried.
    codes: [...UPSTREAM_CODES, 'upstream_answer_too_large'],
    floods: true,
    callersFault: true,
  },
  {
    mode: 'endless-line',
    scenario: `upstream sends one chunk, then drips a line that never ends, 1 KiB every 100 ms (never silent for stream_timeout ${STREAM_TIMEOUT_S} s)`,
    ratePerSecond: 6,
    codes: UPSTREAM_CODES,
    dripMs: 100,
  },
  {
    mode: 'oversize',
    scenario: `upstream answers an 80 MiB JSON body, chunked (read limit 64 MiB; single deployment's attempt timeout ${REQUEST_TIMEOUT_S} s)`,
    ratePerSecond: 2,
    // The 2 s attempt timeout ends a read of 64 MiB first on a busy machine: the bound would go untested.
    soloModel: 'solo-long',
    codes: [...UPSTREAM_CODES, 'upstream_answer_too_large'],
    floods: true,
    callersFault: true,
  },
  {
    mode: 'wrong-content-type',
    scenario: 'upstream answers text/html 200 to JSON requests and application/json to stream requests',
    ratePerSecond: 6,
    codes: UPSTREAM_CODES,
  },
];

describe('misbehaving upstreams under load on two gateway processes', () => {
  let cluster: UpstreamCluster;
  const keys: Record<'pair' | 'solo' | 'calm', string> = { pair: '', solo: '', calm: '' };

  // Worst case: two gateway spawns (the first migrating) on a busy 2-core machine.
  beforeAll(async () => {
    cluster = UpstreamCluster.create();
    await cluster.boot();
    for (const model of ['pair', 'solo', 'calm'] as const)
      keys[model] = await cluster.createKey({ max_parallel_requests: PARALLEL_LIMIT });
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  const load = (model: 'pair' | 'solo' | 'calm', ratePerSecond: number, sentModel: string = model) =>
    UpstreamLoad.start({
      baseUrls: cluster.baseUrls(),
      apiKey: keys[model],
      model: sentModel,
      ratePerSecond,
      streamShare: 1 / 3,
      timeoutMs: DEADLINE_MS,
      leakMarker: LEAK_MARKER,
    });

  for (const fault of FAULTS) {
    it(`${fault.mode}${fault.dripMs ? ' (drip)' : ''}: bounded, clean errors, failover, no leak of memory or slots`, async () => {
      cluster.resetPeakRss();
      cluster.hostile.resetPeakFlooding();
      const firstExchange = cluster.hostile.exchanges.length;
      const before = cluster.memory();
      cluster.hostile.mode = fault.mode;
      cluster.hostile.firstByteDelayMs = fault.mode === 'slow-first-byte' ? 6_000 : 0;
      cluster.hostile.dripMs = fault.dripMs ?? 0;
      const readiness = cluster.watchReadiness();
      const loads = {
        pair: load('pair', fault.ratePerSecond),
        solo: load('solo', fault.ratePerSecond, fault.soloModel),
        calm: load('calm', fault.ratePerSecond),
      };
      await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
      const [pair, solo, calm] = await Promise.all([loads.pair.stop(), loads.solo.stop(), loads.calm.stop()]);
      const faultEnded = performance.now();
      const peak = cluster.memory();
      const readinessSeen = await readiness.stop();
      cluster.hostile.mode = 'healthy';
      cluster.hostile.firstByteDelayMs = 0;
      cluster.hostile.dripMs = 0;
      const context = `${fault.mode}\n${cluster.output()}`;

      expect(cluster.alive(), context).toBe(true);
      for (const [group, answers] of Object.entries({ pair, solo, calm })) {
        expect(answers.length, group).toBeGreaterThan(0);
        expect(stalled(answers), `${group}: requests past the deadline`).toEqual([]);
        expect(
          answers.filter((a) => a.leaked),
          `${group}: provider body relayed`,
        ).toEqual([]);
        expect(unclean(answers, fault.codes), `${group}: failures not cleanly classified`).toEqual([]);
      }
      // An upstream fault is not the gateway's: readiness stays up (a balancer would pull every replica).
      // Under a flood the 2-core machine's CPU is saturated (the upstream's writer runs here too), and a
      // probe may miss its 1 s deadline: counted for the report, not asserted.
      const unready = readinessSeen.filter((status) => status !== 200).length;
      if (!fault.floods) expect(unready, 'readiness probes not answering 200').toBe(0);
      // The fault reached the solo caller, as a clean error.
      expect(solo.filter((a) => a.ending === 'served').length).toBeLessThan(solo.length);
      // Another caller's healthy model noticed nothing.
      expect(calm.filter((a) => a.ending !== 'served')).toEqual([]);
      const failedOver = pair.filter((a) => a.ending === 'served' && (a.attempts ?? 1) > 1).length;
      // Availability with a healthy second deployment: every non-streamed request is served; only streams
      // that had started on the hostile deployment may fail (they cannot move once content was sent), and
      // answers too large, which are the request's doing (not retried, spec: upstream_answer_too_large).
      expect(
        pair.filter(
          (a) =>
            a.ending !== 'served' &&
            !(a.stream && a.ending === 'in-band-error' && a.deployment === 'pair-hostile') &&
            !(fault.callersFault && a.code === 'upstream_answer_too_large'),
        ),
        'pair: failures failover should have carried',
      ).toEqual([]);
      if (!fault.callersFault) {
        expect(failedOver, 'failover shows in the answers').toBeGreaterThan(0);
      }
      // Every answer was abandoned at the read limit: the upstream wrote at most that much and what the
      // sockets buffer (it writes up to 256 MiB, so a gateway reading on would show here).
      const writtenMb = cluster.hostile.exchanges
        .slice(firstExchange)
        .map((exchange) => exchange.bytes / 2 ** 20);
      expect(Math.max(0, ...writtenMb), 'MiB an upstream wrote to one answer').toBeLessThan(
        READ_LIMIT_MB + SOCKET_SLACK_MB,
      );
      const growth = Math.max(...peak.map((memory, index) => memory.peakRssMb - before[index]!.rssMb));
      // Flooding answers are read up to the read limit each, so memory is bounded per answer in flight,
      // plus the buffers of answers already refused that the collector has not freed yet (room for two).
      // How many flood at once depends on how fast this machine moves bytes (one CI run reached +203 MiB
      // against a fixed 200), so the bound counts them. The exact read limit is oversized-answers.test.ts's.
      const floodBoundMb = READ_LIMIT_MB * (cluster.hostile.peakFlooding + 2);
      expect(
        growth,
        `peak RSS growth of a gateway process (MiB); at most ${cluster.hostile.peakFlooding} answers flooded at once`,
      ).toBeLessThan(Math.max(MEMORY_BOUND_MB, floodBoundMb));
      expect(await cluster.upstreamReleased(3_000), 'the gateways hung up on every hostile answer').toBe(
        true,
      );
      const recovery = await cluster.recoverySeconds(keys.solo, 'solo', faultEnded);
      expect(recovery, 'solo serves again once the upstream is healthy').not.toBeNull();
      for (const key of [keys.pair, keys.solo])
        expect(await cluster.checkSlots(key, PARALLEL_LIMIT)).toEqual({
          served: PARALLEL_LIMIT,
          refused: 1,
          other: [],
        });

      const [pairSpend, soloSpend] = [await cluster.spendVerdict(pair), await cluster.spendVerdict(solo)];
      expect(pairSpend).toBe('exact');
      expect(soloSpend).toBe('exact');
      const tooLarge = solo.some((a) => a.code === 'upstream_answer_too_large');
      // The oversize fault must reach the read bound, not pass as a timeout scenario.
      if (fault.mode === 'oversize') expect(tooLarge, 'a solo answer met the 64 MiB bound').toBe(true);
      const common = { group: 'Upstream', readinessSeconds: null };
      const floods =
        cluster.hostile.peakFlooding > 0
          ? ` (at most ${cluster.hostile.peakFlooding} answers flooding at once, at most ${Math.round(Math.max(...writtenMb))} MiB written to one)`
          : '';
      recordScenario({
        ...common,
        scenario: `${fault.scenario}; group of 2 deployments`,
        mode: 'failover',
        requests: pair.length,
        ...tally(pair),
        recoverySeconds: null,
        spend: pairSpend,
        notes: `${failedOver} answered after failover; calm model of another key ${calm.length}/${calm.length} served; peak RSS +${Math.round(growth)} MiB${floods}; slots intact`,
      });
      recordScenario({
        ...common,
        scenario: `${fault.scenario}; single deployment`,
        mode: 'fault reaches caller',
        requests: solo.length,
        ...tally(solo),
        recoverySeconds: recovery,
        spend: soloSpend,
        notes: `slowest ${Math.round(slowest(solo))} ms (deadline ${DEADLINE_MS} ms); ${unready ? `${unready} of ${readinessSeen.length} readiness probes not 200 (CPU saturated)` : 'readiness stayed 200'}; slots intact${
          tooLarge
            ? `; ${solo.filter((a) => a.code === 'upstream_answer_too_large').length} answered upstream_answer_too_large`
            : ''
        }`,
      });
    });
  }

  it("one caller's refused and abandoned requests do not cool the deployment down for another caller", async () => {
    // Caller A's requests (marked) are refused by the provider as invalid, then abandoned by A while
    // the provider is slow; caller B's requests to the same deployment are answered throughout. Neither
    // says anything about the deployment's health, so B must never meet a cooldown.
    const callerA = await cluster.createKey({ max_parallel_requests: PARALLEL_LIMIT });
    cluster.hostile.trigger = 'caller-a';
    try {
      const b = load('solo', 6);
      const aLoad = (timeoutMs: number) =>
        UpstreamLoad.start({
          baseUrls: cluster.baseUrls(),
          apiKey: callerA,
          model: 'solo',
          ratePerSecond: 6,
          streamShare: 1 / 3,
          timeoutMs,
          content: 'caller-a asks for something the provider refuses',
          leakMarker: LEAK_MARKER,
        });
      cluster.hostile.mode = 'reject';
      const refused = await aLoad(DEADLINE_MS).stopAfter(2_000);
      cluster.hostile.mode = 'slow-first-byte';
      cluster.hostile.firstByteDelayMs = 3_000;
      const abandoned = await aLoad(200).stopAfter(2_000);
      const others = await b.stop();
      cluster.hostile.mode = 'healthy';
      cluster.hostile.firstByteDelayMs = 0;

      expect(cluster.alive(), cluster.output()).toBe(true);
      expect(refused.filter((a) => !(a.status === 400 && a.code === 'upstream_rejected_request'))).toEqual(
        [],
      );
      expect(refused.filter((a) => a.leaked)).toEqual([]);
      expect(abandoned.every((a) => a.ending === 'timeout')).toBe(true);
      // B met no cooldown (503 no_healthy_deployment) and no failure at all.
      expect(others.filter((a) => a.ending !== 'served')).toEqual([]);
      expect(await cluster.upstreamReleased(3_000), 'abandoned requests were aborted upstream').toBe(true);
      expect(await cluster.checkSlots(callerA, PARALLEL_LIMIT)).toEqual({
        served: PARALLEL_LIMIT,
        refused: 1,
        other: [],
      });
      const spend = await cluster.spendVerdict([...others, ...refused, ...abandoned]);
      expect(spend).toBe('exact');
      recordScenario({
        group: 'Upstream',
        scenario:
          "one caller's requests refused by the provider (400), then abandoned by the caller, while another caller uses the same single deployment",
        mode: 'no cooldown for caller mistakes',
        requests: others.length,
        ...tally(others),
        recoverySeconds: null,
        readinessSeconds: null,
        spend,
        notes: `figures are the other caller's; the first caller had ${refused.length} refused (400 upstream_rejected_request) and ${abandoned.length} abandoned; no cooldown, slots intact`,
      });
    } finally {
      cluster.hostile.trigger = undefined;
    }
  });
});

function stalled(answers: readonly Answer[]): Answer[] {
  return answers.filter(
    (a) => a.ending === 'timeout' || a.ending === 'network' || a.endedAt - a.startedAt > DEADLINE_MS,
  );
}

/** Failures that are not a documented 502/503/504 code or a stream's in-band error event. */
function unclean(answers: readonly Answer[], codes: readonly string[]): Answer[] {
  return answers.filter((a) => {
    if (a.ending === 'served') return false;
    if (a.ending === 'in-band-error') return !(a.stream && a.code && codes.includes(a.code));
    if (a.ending !== 'error') return true;
    if (a.status === 503) return a.code !== 'no_healthy_deployment';
    return !([502, 504].includes(a.status) && a.code && codes.includes(a.code));
  });
}

function slowest(answers: readonly Answer[]): number {
  return Math.max(0, ...answers.map((a) => a.endedAt - a.startedAt));
}
