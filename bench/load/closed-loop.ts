/**
 * Closed-loop throughput at a fixed concurrency: wrk when it is installed (a Lua script sets the POST
 * body and headers), autocannon otherwise. Both run as pinned child processes.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { runToCompletion } from '../run/child-processes.ts';
import { type ClosedLoopResult, parseAutocannonJson, parseWrkOutput } from './closed-loop-output.ts';

export type ClosedLoopTool = 'wrk' | 'autocannon';

export interface ClosedLoopOptions {
  tool: ClosedLoopTool;
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  durationSeconds: number;
  cpu: number | undefined;
  /** Where the wrk script is written. */
  workDirectory: string;
}

/** wrk if it runs here, else autocannon (a devDependency). */
export function availableClosedLoopTool(): ClosedLoopTool {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
  } catch (error) {
    // wrk --version exits 1 after printing; only a missing binary means no wrk.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'autocannon';
  }
  return 'wrk';
}

/** A wrk Lua script that sends `body` with `headers` as a POST. */
export function wrkScript(body: string, headers: Record<string, string>): string {
  let level = '';
  while (body.includes(`]${level}]`)) level += '=';
  const lines = ['wrk.method = "POST"', `wrk.body = [${level}[${body}]${level}]`];
  for (const [name, value] of Object.entries({ 'Content-Type': 'application/json', ...headers })) {
    lines.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function runClosedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const timeoutMs = options.durationSeconds * 1000 + 15_000;
  if (options.tool === 'wrk') {
    const script = join(options.workDirectory, `wrk-${Date.now()}.lua`);
    writeFileSync(script, wrkScript(options.body, options.headers));
    const { code, stdout, stderr } = await runToCompletion(
      'wrk',
      [
        '-t1',
        `-c${options.connections}`,
        `-d${options.durationSeconds}s`,
        '--latency',
        '-s',
        script,
        options.url,
      ],
      { cpu: options.cpu, timeoutMs },
    );
    if (code !== 0) throw new Error(`wrk exited with ${code}: ${stderr}${stdout}`);
    return parseWrkOutput(stdout);
  }
  const entry = createRequire(import.meta.url).resolve('autocannon');
  const headerArgs = Object.entries({ 'content-type': 'application/json', ...options.headers }).flatMap(
    ([name, value]) => ['-H', `${name}=${value}`],
  );
  const { code, stdout, stderr } = await runToCompletion(
    process.execPath,
    [
      entry,
      '-c',
      String(options.connections),
      '-d',
      String(options.durationSeconds),
      '-m',
      'POST',
      ...headerArgs,
      '-b',
      options.body,
      '-j',
      options.url,
    ],
    { cpu: options.cpu, timeoutMs },
  );
  if (code !== 0) throw new Error(`autocannon exited with ${code}: ${stderr}`);
  return parseAutocannonJson(stdout);
}
