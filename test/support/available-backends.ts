/** The backend factories this run can use: both with the real servers, else only the embedded one. */
import { type Backend, backendFactories } from './backends.ts';
import { realBackendsAvailable } from './test-env.ts';

export async function availableBackends(): Promise<ReadonlyArray<readonly [string, () => Backend]>> {
  return (await realBackendsAvailable()) ? backendFactories : backendFactories.slice(0, 1);
}
