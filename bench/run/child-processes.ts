/**
 * Every process the benchmark starts goes through here: pinned to a CPU with `taskset` where it
 * exists, remembered by PID, and stopped by PID, on success, failure or a signal alike.
 */
import { type ChildProcess, execFileSync, type SpawnOptions, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';

const running = new Set<ChildProcess>();

let tasksetAvailable: boolean | undefined;

export function hasTaskset(): boolean {
  if (tasksetAvailable === undefined) {
    try {
      execFileSync('taskset', ['--version'], { stdio: 'ignore' });
      tasksetAvailable = true;
    } catch {
      tasksetAvailable = false;
    }
  }
  return tasksetAvailable;
}

/** `command args` run on `cpu` (taskset execs, so the PID is the command's own). */
export function pinned(cpu: number | undefined, command: string, args: string[]): [string, string[]] {
  return cpu === undefined ? [command, args] : ['taskset', ['-c', String(cpu), command, ...args]];
}

export interface StartedServer {
  name: string;
  pid: number;
  port: number;
  child: ChildProcess;
}

export interface ServerLaunch {
  name: string;
  command: string;
  args: string[];
  cpu: number | undefined;
  env?: NodeJS.ProcessEnv;
  /** File that receives the server's stdout and stderr after its first line. */
  logFile?: string;
  startTimeoutMs?: number;
}

/** Starts a server that prints `{"port": N}` as its first stdout line, and waits for that line. */
export async function startServer(launch: ServerLaunch): Promise<StartedServer> {
  const [command, args] = pinned(launch.cpu, launch.command, launch.args);
  const child = track(
    spawn(command, args, { env: launch.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(`${launch.name} did not start within ${launch.startTimeoutMs ?? 15_000} ms:\n${output}`),
        ),
      launch.startTimeoutMs ?? 15_000,
    );
    child.stderr!.on('data', (piece: Buffer) => {
      output += piece;
    });
    child.stdout!.on('data', (piece: Buffer) => {
      output += piece;
      const line = /^\{"port":\d+\}$/m.exec(output);
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line[0]) as { port: number }).port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${launch.name} exited with ${code} before listening:\n${output}`));
    });
  });
  // Stop collecting once started: the parent must not spend CPU on the servers' output.
  child.stdout!.removeAllListeners('data').resume();
  child.stderr!.removeAllListeners('data').resume();
  return { name: launch.name, pid: child.pid!, port, child };
}

/** Spawns a long-running process whose output goes to `logFile` (or nowhere). */
export function spawnTracked(
  command: string,
  args: string[],
  options: { cpu: number | undefined; env?: NodeJS.ProcessEnv; logFile?: string },
): ChildProcess {
  const [file, fullArgs] = pinned(options.cpu, command, args);
  const out = options.logFile ? openSync(options.logFile, 'a') : 'ignore';
  const spawnOptions: SpawnOptions = { env: options.env ?? process.env, stdio: ['ignore', out, out] };
  try {
    return track(spawn(file, fullArgs, spawnOptions));
  } finally {
    if (typeof out === 'number') closeSync(out);
  }
}

export interface Completed {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, killing it after `timeoutMs`. */
export async function runToCompletion(
  command: string,
  args: string[],
  options: { cpu: number | undefined; timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<Completed> {
  const [file, fullArgs] = pinned(options.cpu, command, args);
  const child = track(
    spawn(file, fullArgs, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (piece: Buffer) => {
    stdout += piece;
  });
  child.stderr!.on('data', (piece: Buffer) => {
    stderr += piece;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Sends SIGTERM and waits up to `graceMs` for the exit, then SIGKILL. */
export async function stopProcess(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Stops every process still running, each by its own PID. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => stopProcess(child)));
}

/** Last resort from an exit handler: synchronous SIGKILL by PID. */
export function killAllNow(): void {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}
