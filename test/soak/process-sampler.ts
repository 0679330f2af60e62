/**
 * What the soak samples from the gateway process: RSS, open descriptors and sockets from /proc/<pid>
 * (Linux), and event-loop lag, heap, handles and CPU from the gateway's own /metrics (prom-client's
 * default process metrics, which `collectDefaultMetrics` exposes). The lag figures come from prom-client's
 * monitorEventLoopDelay histogram, which it resets at every scrape: each sample is the window since the
 * previous one, so nothing else may scrape this gateway during a soak.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { get } from 'node:http';

export interface Sample {
  /** Seconds since the soak started. */
  t: number;
  phase: 'baseline' | 'load' | 'settle';
  rssMb: number;
  heapUsedMb: number;
  /** Event-loop delay over the window since the previous sample, in ms. */
  lagMeanMs: number;
  lagP99Ms: number;
  lagMaxMs: number;
  fds: number;
  sockets: number;
  /** The process's TCP sockets by state (`ESTABLISHED`, `TIME_WAIT`, `CLOSE_WAIT` …). */
  tcpByState: Record<string, number>;
  /** The same sockets by state and peer: `ESTABLISHED inbound`, `ESTABLISHED to :5432` …, to tell leaks apart. */
  tcpByPeer: Record<string, number>;
  activeHandles: number;
  cpuSeconds: number;
  /** Why /metrics gave nothing for this sample (its metric figures are NaN), or null. */
  scrapeError: string | null;
}

// The state column of /proc/net/tcp, as include/net/tcp_states.h numbers them.
const TCP_STATES: Record<string, string> = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
};

export interface Descriptors {
  fds: number;
  sockets: number;
  tcpByState: Record<string, number>;
  tcpByPeer: Record<string, number>;
}

/**
 * Open descriptors of `pid`, those that are sockets, and its TCP sockets by state and by peer (a socket
 * whose local port is `listenPort` is a caller's, `inbound`; others are named by their remote port).
 */
export function readDescriptors(pid: number, listenPort: number): Descriptors {
  const socketInodes = new Set<string>();
  let fds = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed between the listing and the read
    }
    fds++;
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) socketInodes.add(match[1]!);
  }
  const tcpByState: Record<string, number> = {};
  const tcpByPeer: Record<string, number> = {};
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue; // no IPv6 on this host
    }
    for (const line of text.split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      // sl local rem st tx:rx tr:when retrnsmt uid timeout inode …
      if (columns.length < 10 || !socketInodes.has(columns[9]!)) continue;
      const state = TCP_STATES[columns[3]!] ?? columns[3]!;
      tcpByState[state] = (tcpByState[state] ?? 0) + 1;
      if (state === 'LISTEN') continue;
      const localPort = Number.parseInt(columns[1]!.split(':')[1]!, 16);
      const remotePort = Number.parseInt(columns[2]!.split(':')[1]!, 16);
      const peer = `${state} ${localPort === listenPort ? 'inbound' : `to :${remotePort}`}`;
      tcpByPeer[peer] = (tcpByPeer[peer] ?? 0) + 1;
    }
  }
  return { fds, sockets: socketInodes.size, tcpByState, tcpByPeer };
}

/** Resident set size of `pid` in MB, from VmRSS in /proc/<pid>/status. */
export function readRssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}

/** Values of unlabelled series in Prometheus text (`name value` lines). */
export function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*) (\S+)$/.exec(line);
    if (match) values.set(match[1]!, Number(match[2]));
  }
  return values;
}

/**
 * GET /metrics on a connection of its own that closes after the answer (`agent: false`), so the scrape
 * leaves no keep-alive socket in the gateway to blur the descriptor counts.
 */
export async function scrapeMetrics(baseUrl: string, timeoutMs = 10_000): Promise<Map<string, number>> {
  return parseMetrics(await scrapeMetricsText(baseUrl, timeoutMs));
}

/** The raw Prometheus text of /metrics, on a connection of its own. */
export function scrapeMetricsText(baseUrl: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = get(`${baseUrl}/metrics`, { agent: false, timeout: timeoutMs }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () =>
        response.statusCode === 200
          ? resolve(text)
          : reject(new Error(`/metrics answered ${response.statusCode}`)),
      );
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`/metrics took over ${timeoutMs} ms`)));
    request.on('error', reject);
  });
}

/** A metric's value; NaN when the scrape failed or the series is missing (judged as a missing point). */
function value(metrics: Map<string, number> | undefined, name: string, scale = 1): number {
  const found = metrics?.get(name);
  return found === undefined ? Number.NaN : found * scale;
}

export async function takeSample(
  pid: number,
  baseUrl: string,
  t: number,
  phase: Sample['phase'],
): Promise<Sample> {
  const descriptors = readDescriptors(pid, Number(new URL(baseUrl).port));
  const rssMb = readRssMb(pid);
  // A scrape that fails (a starved machine) loses this sample's metrics, not the run: its figures are NaN.
  const metrics = await scrapeMetrics(baseUrl).catch((error: Error) => error);
  const scraped = metrics instanceof Error ? undefined : metrics;
  return {
    t,
    phase,
    rssMb,
    heapUsedMb: value(scraped, 'nodejs_heap_size_used_bytes', 2 ** -20),
    lagMeanMs: value(scraped, 'nodejs_eventloop_lag_mean_seconds', 1000),
    lagP99Ms: value(scraped, 'nodejs_eventloop_lag_p99_seconds', 1000),
    lagMaxMs: value(scraped, 'nodejs_eventloop_lag_max_seconds', 1000),
    ...descriptors,
    activeHandles: value(scraped, 'nodejs_active_handles_total'),
    cpuSeconds: value(scraped, 'process_cpu_seconds_total'),
    scrapeError: metrics instanceof Error ? metrics.message : null,
  };
}
