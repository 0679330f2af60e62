/** What a recorded run needs to be reproduced: commit, Node, CPU, kernel, date. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release } from 'node:os';

export interface MachineInfo {
  commit: string;
  node: string;
  cpu: string;
  kernel: string;
  date: string;
}

export function machineInfo(now: Date): MachineInfo {
  return {
    commit: gitCommit(),
    node: process.version,
    // Not availableParallelism(): the benchmark pins itself to one CPU.
    cpu: `${cpus().length} × ${cpuModel()}`,
    kernel: `Linux ${release()}`,
    date: now.toISOString(),
  };
}

/** Short commit, marked `+changes` when the work tree differs from it (the run is then not that commit). */
function gitCommit(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const changes = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
    }).trim();
    return changes ? `${commit}+changes` : commit;
  } catch {
    return 'unknown';
  }
}

function cpuModel(): string {
  try {
    return (
      /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? 'unknown CPU'
    );
  } catch {
    return 'unknown CPU';
  }
}
