/**
 * The unit suite on a loaded machine (npm run test:loaded, issue 31): one spinning child per core for
 * the whole run, so a test that only passes on an idle machine (a wall-clock bound, a sleep standing in
 * for an event) fails whenever this run is made, instead of now and then on a busy runner. The teardown
 * fails the run if a burner died early: a pass without the load proves nothing.
 */
import { availableParallelism } from 'node:os';
import { CpuBurner } from './cpu-burner.ts';

export default function setup(): () => Promise<void> {
  const processes = availableParallelism();
  const burner = CpuBurner.start(processes);
  console.log(`[test:loaded] ${processes} CPU burner process(es) spinning for the whole run`);
  return async () => {
    const burnedThroughout = burner.burning;
    await burner.stop();
    if (!burnedThroughout) throw new Error('[test:loaded] a CPU burner exited before the end of the run');
  };
}
