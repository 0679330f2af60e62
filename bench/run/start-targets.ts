/**
 * Starts the raw upstream and the selected proxies (each its own pinned process), checks that every
 * target answers a chat request and a stream before anything is measured, and stops them all.
 */
import { fileURLToPath } from 'node:url';
import { chatRequestBody } from '../load/chat-request-body.ts';
import { embeddingRequestBody } from '../load/embedding-request-body.ts';
import { sumMetric } from '../measure/prometheus-text.ts';
import { type PrivateRedis, startPrivateRedis } from '../servers/private-redis.ts';
import {
  type SwitchboardProvider,
  type SwitchboardTarget,
  startSwitchboard,
} from '../servers/switchboard-target.ts';
import type { BenchOptions, TargetName } from './bench-options.ts';
import { type StartedServer, startServer, stopProcess } from './child-processes.ts';

export interface Target {
  name: TargetName;
  /** The chat-completions URL. */
  url: string;
  headers: Record<string, string>;
  /** Switchboard: the headers of the key whose answers come from the response cache (the cached phase). */
  cachedHeaders?: Record<string, string>;
  /** The process charged with this target's CPU and memory: the proxy under test (none for direct). */
  pid: number | undefined;
}

export interface CpuPlan {
  /** Upstream and load generators. */
  load: number | undefined;
  /** The proxy under test. */
  proxy: number | undefined;
}

export interface RunningTargets {
  targets: Target[];
  /** The upstream's and every proxy's PID. */
  serverPids: number[];
  provider: SwitchboardProvider | undefined;
  /** Rate-limit headers Switchboard sent to the limited key (empty: limits are not enforced yet). */
  limitHeaders: string[];
  notes: string[];
  switchboardLogFile: string | undefined;
  /** Switchboard's rate-limit store errors so far (Redis commands that failed or timed out). */
  storeErrors(): Promise<number | undefined>;
  stop(): Promise<void>;
}

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const CHAT_PATH = '/v1/chat/completions';

export async function startTargets(
  options: BenchOptions,
  cpus: CpuPlan,
  workDirectory: string,
  profileDirectory: string | undefined,
): Promise<RunningTargets> {
  const servers: StartedServer[] = [];
  let switchboard: SwitchboardTarget | undefined;
  let redis: PrivateRedis | undefined;
  const stop = async () => {
    await Promise.all([switchboard?.stop(), ...servers.map((server) => stopProcess(server.child))]);
    await redis?.stop();
  };
  try {
    const upstream = await startServer({
      name: 'raw upstream',
      command: process.execPath,
      args: [
        here('../servers/raw-upstream.ts'),
        '--chunks',
        String(options.chunks),
        '--chunk-delay-ms',
        String(options.chunkDelayMs),
      ],
      cpu: cpus.load,
    });
    servers.push(upstream);
    const targets: Target[] = [];
    const notes: string[] = [];
    const local = (port: number) => `http://127.0.0.1:${port}${CHAT_PATH}`;
    if (options.targets.includes('direct')) {
      targets.push({ name: 'direct', url: local(upstream.port), headers: {}, pid: undefined });
    }
    if (options.targets.includes('bare')) {
      const bare = await startServer({
        name: 'bare proxy',
        command: process.execPath,
        args: [here('../servers/bare-proxy.ts'), '--upstream', `http://127.0.0.1:${upstream.port}`],
        cpu: cpus.proxy,
      });
      servers.push(bare);
      targets.push({ name: 'bare', url: local(bare.port), headers: {}, pid: bare.pid });
    }
    const wantsLimited = options.targets.includes('switchboard-limited');
    if (options.targets.includes('switchboard') || wantsLimited) {
      if (options.redis) redis = await startPrivateRedis(cpus.load);
      switchboard = await startSwitchboard({
        provider: options.provider,
        upstreamPort: upstream.port,
        cpu: cpus.proxy,
        workDirectory,
        chunkCount: options.chunks,
        chunkDelayMs: options.chunkDelayMs,
        profileDirectory,
        withLimitedKey: wantsLimited,
        nodeFlags: options.switchboardNodeFlags,
        redisUrl: redis?.url,
        spendMode: options.spendMode,
      });
      notes.push(...switchboard.notes);
      const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
      if (options.targets.includes('switchboard')) {
        targets.push({
          name: 'switchboard',
          url: local(switchboard.port),
          headers: bearer(switchboard.unlimitedKey),
          cachedHeaders: bearer(switchboard.cachedKey),
          pid: switchboard.pid,
        });
      }
      if (switchboard.limitedKey) {
        targets.push({
          name: 'switchboard-limited',
          url: local(switchboard.port),
          headers: bearer(switchboard.limitedKey),
          pid: switchboard.pid,
        });
      }
    }
    let limitHeaders: string[] = [];
    for (const target of targets) {
      const headers = await probe(target);
      if (options.phases.includes('embeddings')) await probeEmbeddings(target);
      if (target.name === 'switchboard-limited')
        limitHeaders = headers.filter((name) => name.includes('ratelimit'));
    }
    return {
      targets,
      serverPids: [
        ...servers.map((server) => server.pid),
        ...(switchboard ? [switchboard.pid] : []),
        ...(redis ? [redis.pid] : []),
      ],
      provider: switchboard?.provider,
      limitHeaders,
      notes,
      switchboardLogFile: switchboard?.logFile,
      storeErrors: () => (switchboard ? readStoreErrors(switchboard.port) : Promise.resolve(undefined)),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function readStoreErrors(port: number): Promise<number | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) });
    return sumMetric(await response.text(), 'gateway_ratelimit_store_errors_total');
  } catch {
    return undefined;
  }
}

/** One embeddings request, for the embeddings phase; throws unless it succeeds. */
async function probeEmbeddings(target: Target): Promise<void> {
  const answer = await fetch(target.url.replace(/\/v1\/chat\/completions$/, '/v1/embeddings'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: embeddingRequestBody(),
    signal: AbortSignal.timeout(10_000),
  });
  const body = await answer.text();
  if (answer.status !== 200)
    throw new Error(
      `${target.name} answered ${answer.status} to the embeddings probe: ${body.slice(0, 500)}`,
    );
}

/** One chat request and one stream; throws unless both succeed. Returns the chat answer's header names. */
async function probe(target: Target): Promise<string[]> {
  const send = (stream: boolean) =>
    fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: chatRequestBody(stream),
      signal: AbortSignal.timeout(10_000),
    });
  const answer = await send(false);
  const body = await answer.text();
  if (answer.status !== 200)
    throw new Error(`${target.name} answered ${answer.status} to the probe: ${body}`);
  const stream = await send(true);
  const events = await stream.text();
  if (stream.status !== 200 || !events.includes('data: [DONE]')) {
    throw new Error(`${target.name} did not stream the probe (${stream.status}): ${events.slice(0, 500)}`);
  }
  return [...answer.headers.keys()];
}
