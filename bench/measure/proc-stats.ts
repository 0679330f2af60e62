/**
 * Readings from Linux /proc: a process's CPU time (`/proc/PID/stat`) and peak resident set
 * (`/proc/PID/status` VmHWM), and the machine's CPU times with steal (`/proc/stat`). Parsers are pure;
 * the readers return undefined where /proc is missing (not Linux) or the process is gone.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ProcessCpu {
  /** utime + stime, in clock ticks. */
  ticks: number;
  /** cutime + cstime: children that have exited and been waited for, in clock ticks. */
  childTicks: number;
}

export interface CpuTimes {
  /** Every tick the CPU accounted: user, nice, system, idle, iowait, irq, softirq, steal. */
  total: number;
  /**
   * User, nice and system ticks: time processes ran. Interrupt time is left out: on loopback it is
   * mostly our own traffic, and no process is charged with it.
   */
  busy: number;
  steal: number;
}

/** CPU times of a `/proc/PID/stat` line. The command name may hold spaces and parentheses. */
export function parseProcessStat(text: string): ProcessCpu {
  const fields = text
    .slice(text.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  // Fields 14-17 (utime, stime, cutime, cstime) of proc(5); the slice starts at field 3 (state).
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
  if (![utime, stime, cutime, cstime].every(Number.isFinite))
    throw new Error('unexpected /proc/PID/stat format');
  return { ticks: utime! + stime!, childTicks: cutime! + cstime! };
}

/** VmHWM (peak resident set) of a `/proc/PID/status` text, in kilobytes. */
export function parsePeakResidentKilobytes(text: string): number | undefined {
  const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The `cpu` (all CPUs) and `cpuN` lines of `/proc/stat`, by name. */
export function parseSystemStat(text: string): Map<string, CpuTimes> {
  const cpus = new Map<string, CpuTimes>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('cpu')) continue;
    const [name, ...rest] = line.trim().split(/\s+/);
    // user nice system idle iowait irq softirq steal; guest time is already inside user.
    const values = rest.slice(0, 8).map(Number);
    const total = values.reduce((sum, value) => sum + value, 0);
    const [user, nice, system, steal] = [values[0] ?? 0, values[1] ?? 0, values[2] ?? 0, values[7] ?? 0];
    cpus.set(name!, { total, busy: user + nice + system, steal });
  }
  return cpus;
}

/** Steal as a percentage of all ticks between two readings; 0 when no time passed. */
export function stealPercent(before: CpuTimes, after: CpuTimes): number {
  const total = after.total - before.total;
  return total > 0 ? ((after.steal - before.steal) / total) * 100 : 0;
}

/**
 * CPU used by processes other than ours between two readings, as a percentage of all the machine's
 * ticks: busy ticks minus the ticks our processes account for (other sessions, builds, tests).
 */
export function foreignPercent(before: CpuTimes, after: CpuTimes, ourTicks: number): number {
  const total = after.total - before.total;
  return total > 0 ? (Math.max(0, after.busy - before.busy - ourTicks) / total) * 100 : 0;
}

export function readProcessCpu(pid: number): ProcessCpu | undefined {
  try {
    return parseProcessStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Ticks of the given servers, of this process, and of its exited children (the load generators). */
export function ourTicks(serverPids: readonly number[]): number | undefined {
  const self = readProcessCpu(process.pid);
  if (!self) return undefined;
  let ticks = self.ticks + self.childTicks;
  for (const pid of serverPids) ticks += readProcessCpu(pid)?.ticks ?? 0;
  return ticks;
}

export function readPeakResidentKilobytes(pid: number): number | undefined {
  try {
    return parsePeakResidentKilobytes(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return undefined;
  }
}

export function readSystemCpu(): Map<string, CpuTimes> | undefined {
  try {
    return parseSystemStat(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** Clock ticks per second (`getconf CLK_TCK`), 100 when it cannot be asked. */
export function clockTicksPerSecond(): number {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
}
