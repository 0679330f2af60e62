/**
 * Other sessions share this machine, and pinning cannot keep their processes off our CPUs. Before a
 * phase we watch the CPU they use in short windows and start once it is low, or when the wait runs out.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { foreignPercent, ourTicks, readSystemCpu } from '../measure/proc-stats.ts';

/** Other processes may use this share of the machine and still count as quiet. */
export const QUIET_PERCENT = 10;
const WINDOW_MS = 250;

/**
 * Resolves with the milliseconds spent waiting beyond the first window (0 when the machine was quiet
 * at once or /proc is missing).
 */
export async function waitForQuiet(serverPids: readonly number[], maxWaitMs: number): Promise<number> {
  const started = Date.now();
  for (let window = 0; Date.now() - started < maxWaitMs; window++) {
    const systemBefore = readSystemCpu()?.get('cpu');
    const oursBefore = ourTicks(serverPids);
    await delay(WINDOW_MS);
    const systemAfter = readSystemCpu()?.get('cpu');
    const oursAfter = ourTicks(serverPids);
    if (!systemBefore || !systemAfter || oursBefore === undefined || oursAfter === undefined) return 0;
    if (foreignPercent(systemBefore, systemAfter, oursAfter - oursBefore) <= QUIET_PERCENT) {
      return window === 0 ? 0 : Date.now() - started - WINDOW_MS;
    }
  }
  return Date.now() - started;
}
