/**
 * Where the real backends are: PostgreSQL and Redis on loopback by default. With
 * REQUIRE_REAL_BACKENDS=1 (CI) a missing backend fails the run instead of skipping its tests.
 */
import { createConnection } from 'node:net';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const REQUIRE_REAL_BACKENDS = process.env.REQUIRE_REAL_BACKENDS === '1';

const reachable = new Map<string, Promise<boolean>>();

/** True when a TCP connection to the URL's host and port succeeds. */
export function isReachable(url: string): Promise<boolean> {
  let result = reachable.get(url);
  if (!result) {
    const { hostname, port } = new URL(url);
    const defaultPort = url.startsWith('redis') ? 6379 : 5432;
    result = new Promise((resolve) => {
      const socket = createConnection({ host: hostname, port: Number(port || defaultPort) });
      // Generous: under load a short timer can fire before the connect event is read.
      socket.setTimeout(5_000);
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
    reachable.set(url, result);
  }
  return result;
}

/** Resolves whether the real backends can be used; throws when they are required but missing. */
export async function realBackendsAvailable(): Promise<boolean> {
  const [postgres, redis] = await Promise.all([isReachable(TEST_DATABASE_URL), isReachable(TEST_REDIS_URL)]);
  if (postgres && redis) return true;
  if (REQUIRE_REAL_BACKENDS) {
    throw new Error(
      `REQUIRE_REAL_BACKENDS=1 but ${!postgres ? `PostgreSQL (${TEST_DATABASE_URL})` : `Redis (${TEST_REDIS_URL})`} is not reachable`,
    );
  }
  return false;
}
