/**
 * Whether an error means the database could not be reached or dropped the connection (a restart, a
 * failover, a network cut), as opposed to a query of ours that failed. The first is the database's
 * outage and answers 503 with retry-after; only the second is our own failure (500).
 */

/** Node's socket errors when connecting or while connected. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

/**
 * PostgreSQL SQLSTATEs of a server going away or refusing connections: the connection exceptions of class
 * 08 except 08P01 (protocol_violation, which a query of ours with too many parameters also gets), the
 * shutdowns 57P01–57P03, and too_many_connections; and of a database that does not answer in time: a
 * statement past database_statement_timeout_ms (57014, a locked table, a stalled server) or a lock wait
 * past lock_timeout (55P03).
 */
const POSTGRES_STATES = new Set([
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '57014',
  '55P03',
]);

/** node-postgres's own messages when the connection ends or the pool cannot connect in time. */
const POOL_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

export function isDatabaseOutage(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || POSTGRES_STATES.has(code))) return true;
  if (POOL_MESSAGES.test(error.message)) return true;
  // Node reports a refused connection to every address of a host as one AggregateError.
  return error instanceof AggregateError && error.errors.some(isDatabaseOutage);
}
