/**
 * Runs the real CLI (`node src/main.ts`) as a child process, for tests of start-up, flags, exit codes,
 * cluster workers and SIGTERM. The child's output is collected for assertions and failure messages.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from './tcp-ports.ts';

export interface SpawnedGateway {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  output(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['src/main.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** `port`: listen there instead of a free port (a restart on the port a load or balancer still uses). */
export async function spawnGateway(
  args: string[],
  env: Record<string, string> = {},
  port?: number,
): Promise<SpawnedGateway> {
  port ??= await freePort();
  const child = spawn(process.execPath, ['src/main.ts', 'serve', '--port', String(port), ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: 'pipe',
  });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${baseUrl}/health/liveliness`)).ok) break;
    } catch {
      // not listening yet
    }
    await delay(100);
  }
  return {
    child,
    baseUrl,
    port,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      // Already gone (exited, or killed by a signal: then exitCode stays null and 'exit' will not come again).
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

/**
 * Starts a batch worker process (`batch-worker` with a health listener on a free port) and waits until
 * its /health/liveliness answers.
 */
export async function spawnBatchWorker(
  args: string[],
  env: Record<string, string> = {},
): Promise<SpawnedGateway> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['src/main.ts', 'batch-worker', '--health-port', String(port), ...args],
    {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: 'pipe',
    },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk;
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const baseUrl = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 30_000; ; await delay(100)) {
    if (child.exitCode !== null)
      throw new Error(`the batch worker exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`the batch worker did not start:\n${output}`);
    if (
      await fetch(`${baseUrl}/health/liveliness`).then(
        (answer) => answer.ok,
        () => false,
      )
    )
      break;
  }
  return {
    child,
    baseUrl,
    port,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}
