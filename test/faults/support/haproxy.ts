/**
 * A real HAProxy on loopback in front of gateway replicas, for the scale-out test and benchmark: round
 * robin, health checks on /health/readiness, a connection refused retried once on another replica (as a
 * production balancer is set up; `retries: 0` turns that off), a request already sent never retried.
 * Every request is logged to
 * stdout with its x-request-id and the server that answered it, so a test can tell which replica a
 * failed request went to.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { acceptsConnections, freePort } from '../../support/tcp-ports.ts';

export const HAPROXY_BINARY = process.env.HAPROXY_BINARY ?? 'haproxy';

/** One logged request: its x-request-id, the server name (`r0`…, `<NOSRV>` when none) and HAProxy's status. */
export interface HaproxyLogLine {
  requestId: string;
  server: string;
  status: number;
  /** HAProxy's termination state (`--` for a normal end, `SH`/`SD` when the server went away, …). */
  termination: string;
}

export interface HaproxyOptions {
  /** Replica ports on 127.0.0.1, named r0, r1, … in that order. */
  serverPorts: readonly number[];
  /** Health-check interval (ms, default 500); a replica is marked down after three failed checks. */
  checkIntervalMs?: number;
  /** Server-side answer deadline (ms). */
  serverTimeoutMs?: number;
  /** Log every request (default true); the benchmark turns it off to keep HAProxy's own cost low. */
  logRequests?: boolean;
  /**
   * One connection per request on both sides (`option httpclose`). When a replica dies before answering
   * a request that was not the first on its client connection, HAProxy closes that connection silently
   * and may log nothing (a keep-alive race the client may retry); on a fresh connection it answers 502
   * and logs it. The kill test needs every failure logged; the benchmark keeps keep-alive.
   */
  closeServerConnections?: boolean;
  /**
   * Retries of a connection that failed (default 1, on another replica: `option redispatch`). 0: no
   * retry and no redispatch, like a plain Kubernetes Service, so a request sent to a replica that is
   * going away fails unless the replica's own drain keeps it from being sent there.
   */
  retries?: number;
}

/** A server's state change as HAProxy logged it, in order. */
export type ServerState = 'UP' | 'DOWN';

/** Throws a clear message when HAProxy is not installed (the test must not skip silently). */
export function requireHaproxy(): void {
  try {
    execFileSync(HAPROXY_BINARY, ['-v'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      `HAProxy is required by the scale-out test and was not found (${HAPROXY_BINARY}): apt-get install haproxy`,
    );
  }
}

export function haproxyConfig(port: number, options: HaproxyOptions): string {
  const { checkIntervalMs = 500, serverTimeoutMs = 30_000, logRequests = true, retries = 1 } = options;
  // logasap: a stream is logged when its head arrives, so one cut later by a kill is in the log already.
  const closing = options.closeServerConnections ? ['  option httpclose', '  option logasap'] : [];
  const servers = options.serverPorts.map(
    (serverPort, index) => `  server r${index} 127.0.0.1:${serverPort} check`,
  );
  return [
    'global',
    '  maxconn 4096',
    '  nbthread 1',
    ...(logRequests ? ['  log stdout format raw local0 info'] : []),
    'defaults',
    '  mode http',
    ...(logRequests ? ['  log global'] : []),
    '  timeout connect 1s',
    '  timeout client 30s',
    `  timeout server ${serverTimeoutMs}ms`,
    '  timeout http-request 10s',
    '  timeout queue 5s',
    // A refused connection (a replica just killed, not yet marked down) is retried on another one;
    // retry-on stays at its default (connect failures only): a request already sent is never replayed.
    `  retries ${retries}`,
    retries > 0 ? '  option redispatch 1' : '  no option redispatch',
    ...closing,
    'frontend gateway',
    `  bind 127.0.0.1:${port}`,
    '  http-request capture req.hdr(x-request-id) len 120',
    '  log-format "sbreq %[capture.req.hdr(0)] %s %ST %tsc"',
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  option httpchk GET /health/readiness',
    '  http-check expect status 200',
    // Three failed checks mark a replica down: a killed one is refused at once, so it is out within
    // about 3 × inter, while a live one slowed by a busy machine (checks may take 2 s) stays in.
    '  timeout check 2s',
    `  default-server inter ${checkIntervalMs}ms fastinter ${checkIntervalMs}ms fall 3 rise 1`,
    ...servers,
    '',
  ].join('\n');
}

export class Haproxy {
  readonly port: number;
  private readonly child: ChildProcess;
  private readonly dir: string;

  private constructor(port: number, child: ChildProcess, dir: string) {
    this.port = port;
    this.child = child;
    this.dir = dir;
  }

  private get output(): string {
    return readFileSync(join(this.dir, 'haproxy.log'), 'utf8');
  }

  static async start(options: HaproxyOptions): Promise<Haproxy> {
    requireHaproxy();
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-haproxy-'));
    const file = join(dir, 'haproxy.cfg');
    writeFileSync(file, haproxyConfig(port, options));
    // -db: stay in the foreground (a child we can kill by PID). Output goes to a file, not a pipe:
    // HAProxy drops a log line when its write would block, and a pipe read by a busy test process does
    // (about 3% of lines were lost in a burst of 200 requests).
    const log = openSync(join(dir, 'haproxy.log'), 'a');
    const child = spawn(HAPROXY_BINARY, ['-f', file, '-db'], { stdio: ['ignore', log, log] });
    closeSync(log);
    const haproxy = new Haproxy(port, child, dir);
    for (let attempt = 0; attempt < 100; attempt++) {
      if (child.exitCode !== null)
        throw new Error(`haproxy exited with ${child.exitCode}:\n${haproxy.output}`);
      if (await acceptsConnections(port)) return haproxy;
      await delay(50);
    }
    await haproxy.stop();
    throw new Error(`haproxy did not listen within 5 s:\n${haproxy.output}`);
  }

  /** Last resort from an exit handler: SIGKILL, only while our child still runs (a PID may be reused). */
  killNow(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Everything HAProxy printed (alerts, server state changes, request lines). */
  text(): string {
    return this.output;
  }

  /** The request lines logged so far. */
  requests(): HaproxyLogLine[] {
    const lines: HaproxyLogLine[] = [];
    for (const line of this.output.split('\n')) {
      const match = /^sbreq (\S+) (\S+) (-?\d+) (\S+)/.exec(line.trim());
      if (match) {
        lines.push({
          requestId: match[1]!,
          server: match[2]!,
          status: Number(match[3]),
          termination: match[4]!,
        });
      }
    }
    return lines;
  }

  /** HAProxy's own lines (alerts, warnings, server state changes), for failure messages. */
  events(): string {
    return this.output
      .split('\n')
      .filter((line) => line && !line.startsWith('sbreq '))
      .join('\n');
  }

  /** True once HAProxy logged that server `name` (r0, r1, …) went down. */
  sawDown(name: string): boolean {
    return new RegExp(`Server replicas/${name} is DOWN`).test(this.output);
  }

  /** Every state change HAProxy logged for server `name`, in order (a restart adds DOWN then UP). */
  states(name: string): ServerState[] {
    const changes = this.output.matchAll(new RegExp(`Server replicas/${name} is (UP|DOWN)\\b`, 'g'));
    return [...changes].map((match) => match[1] as ServerState);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = once(this.child, 'exit');
      this.child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
